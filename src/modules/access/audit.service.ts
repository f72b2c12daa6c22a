import type { AppDeps } from '../../deps.js';
import type { ListSource } from '../../http/list.js';
import { isoMicros } from '../../util/time.js';
import type { ScheduledTask } from '../../jobs/scheduler.lane.js';
import { auditBefore, auditPage, countAudit, deleteAuditBefore, oldestAuditEntry, type AuditWhere } from './audit.queries.js';
import { toAuditEntry, type AuditFilters, type AuditRow } from './audit.schema.js';

/** How long entries are kept. */
export const AUDIT_KEPT_DAYS = 400;
const KEPT_MS = AUDIT_KEPT_DAYS * 86_400_000;

/** The account's entries matching the query's filters, newest first, for `sendList`. */
export function listAudit(deps: AppDeps, userId: number, f: AuditFilters): ListSource<AuditRow, ReturnType<typeof toAuditEntry>> {
  const { db } = deps.database;
  const w: AuditWhere = {
    actorType: f.actor_type,
    actorId: f.actor_id,
    action: f.action,
    since: f.since === undefined ? undefined : isoMicros(new Date(f.since)),
    until: f.until === undefined ? undefined : isoMicros(new Date(f.until)),
  };
  return {
    batch: (before, limit) => auditBefore(db, userId, w, before, limit),
    page: (offset, limit) => auditPage(db, userId, w, offset, limit),
    count: () => countAudit(db, userId, w),
    map: (rows) => rows.map(toAuditEntry),
  };
}

/** Deletes the entries older than 400 days, whenever the oldest comes of that age. */
export const auditRetentionTask: ScheduledTask = {
  name: 'delete audit entries older than 400 days',
  run: (deps, now) => deleteAuditBefore(deps.database.db, new Date(now.getTime() - KEPT_MS)),
  nextDueAt: async (deps) => {
    const oldest = await oldestAuditEntry(deps.database.db);
    return oldest && new Date(oldest.getTime() + KEPT_MS);
  },
};
