import type { SelectQueryBuilder } from 'kysely';
import type { Db } from '../../db/index.js';
import type { DB } from '../../db/types.js';
import type { Actor } from '../../http/principal.js';
import { isoMicros } from '../../util/time.js';
import type { AuditRow } from './audit.schema.js';

/** One entry to write. */
export interface AuditEntry {
  userId: number;
  actor: Actor;
  action: string;
  target: string | null;
  status: number;
  ip: string | null;
  userAgent: string | null;
  at: Date;
}

/** Longest text kept in `target` and `user_agent`: enough to read, bounded whatever the client sends. */
const MAX_TEXT = 255;
const bounded = (s: string | null) => (s === null ? null : s.slice(0, MAX_TEXT));

/** Writes one entry. */
export async function insertAuditEntry(db: Db, e: AuditEntry): Promise<void> {
  await db
    .insertInto('audit_log')
    .values({
      user_id: e.userId,
      actor_type: e.actor.type,
      actor_id: e.actor.id,
      actor_name: bounded(e.actor.name)!,
      action: e.action,
      target: bounded(e.target),
      status: e.status,
      ip: e.ip,
      user_agent: bounded(e.userAgent),
      created_at: isoMicros(e.at),
    })
    .execute();
}

/** Filters of the list, as the service reads them (times already in the stored form). */
export interface AuditWhere {
  actorType?: string;
  actorId?: number;
  action?: string;
  since?: string;
  until?: string;
}

function filtered(db: Db, userId: number, w: AuditWhere): SelectQueryBuilder<DB, 'audit_log', AuditRow> {
  let q = db.selectFrom('audit_log').selectAll().where('user_id', '=', userId);
  if (w.actorType !== undefined) q = q.where('actor_type', '=', w.actorType);
  if (w.actorId !== undefined) q = q.where('actor_id', '=', w.actorId);
  if (w.action !== undefined) q = q.where('action', '=', w.action);
  if (w.since !== undefined) q = q.where('created_at', '>=', w.since);
  if (w.until !== undefined) q = q.where('created_at', '<', w.until);
  return q;
}

/** The account's entries matching `w` with id below `beforeId` (all when null), newest first. */
export function auditBefore(db: Db, userId: number, w: AuditWhere, beforeId: number | null, limit: number): Promise<AuditRow[]> {
  let q = filtered(db, userId, w);
  if (beforeId !== null) q = q.where('id', '<', beforeId);
  return q.orderBy('id', 'desc').limit(limit).execute();
}

/** A page of the account's entries matching `w`, newest first. */
export function auditPage(db: Db, userId: number, w: AuditWhere, offset: number, limit: number): Promise<AuditRow[]> {
  return filtered(db, userId, w).orderBy('id', 'desc').offset(offset).limit(limit).execute();
}

/** How many of the account's entries match `w`. */
export async function countAudit(db: Db, userId: number, w: AuditWhere): Promise<number> {
  const r = await filtered(db, userId, w)
    .clearSelect()
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

/** Deletes every entry written before `before`; returns how many. */
export async function deleteAuditBefore(db: Db, before: Date): Promise<number> {
  const r = await db.deleteFrom('audit_log').where('created_at', '<', isoMicros(before)).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** When the oldest entry was written, or null when there is none. */
export async function oldestAuditEntry(db: Db): Promise<Date | null> {
  const r = await db
    .selectFrom('audit_log')
    .select((eb) => eb.fn.min('created_at').as('at'))
    .executeTakeFirst();
  return r?.at ? new Date(String(r.at)) : null;
}
