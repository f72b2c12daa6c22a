/**
 * Segments whose conditions name engagement (`engagement`, `single_send`) change without any
 * contact changing: a window slides past a date, a person opens a message. Their membership is
 * recomputed whenever it is read, in the reader's transaction: the segment list and its counts,
 * the recipient list, a send that starts and its recipient count. A segment an automation targets
 * is also recomputed at least hourly (`liveSegmentsTask`), so the contacts that join it by the
 * passing of time are enrolled within the hour. Every recomputation enrols its joiners in the
 * automations that target the segment, as a contact change does.
 */
import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/index.js';
import { lockAccountSegments } from '../../db/dialect.js';
import type { ScheduledTask } from '../../jobs/scheduler.lane.js';
import type { RecipientRef } from '../../delivery/audience.js';
import { isoMicros } from '../../util/time.js';
import { enrollJoiners } from '../automations/automations.enroll.js';
import { dependsOnEngagement } from './segments.engagement.js';
import { catalogueOf, refreshSegmentMembers } from './segments.membership.js';
import type { SegmentRow } from './segments.schema.js';

/** How often a segment with engagement conditions that an automation targets is recomputed at least. */
export const REFRESH_EVERY_MS = 60 * 60 * 1000;

function fieldsOf(segment: SegmentRow): string[] {
  try {
    const v = JSON.parse(segment.select_field);
    return Array.isArray(v) ? v.map(String) : [];
  } catch {
    return [];
  }
}

/** Whether the segment's membership depends on engagement (and so on the time it is read). */
export function isLiveSegment(segment: SegmentRow): boolean {
  return dependsOnEngagement(fieldsOf(segment));
}

/**
 * Recomputes, at `now` and in the caller's transaction, the membership of the account's live
 * segments among `segmentIds` (every live segment of the account when undefined) whose conditions
 * name engagement, enrols their joiners in the automations that target them, and records when.
 * Other segments are left alone (contact changes keep them current). Returns how many it recomputed.
 */
export async function refreshEngagementSegments(
  trx: Db,
  deps: AppDeps,
  userId: number,
  segmentIds: readonly number[] | undefined,
  now: Date,
): Promise<number> {
  if (segmentIds !== undefined && segmentIds.length === 0) return 0;
  const segments = (
    await trx
      .selectFrom('segments')
      .selectAll()
      .where('user_id', '=', userId)
      .where('deleted_at', 'is', null)
      .$if(segmentIds !== undefined, (q) => q.where('id', 'in', [...segmentIds!]))
      .orderBy('id')
      .execute()
  ).filter(isLiveSegment);
  if (segments.length === 0) return 0;
  await lockAccountSegments(trx, userId);
  const catalogue = await catalogueOf(trx, userId);
  for (const segment of segments) {
    await refreshSegmentMembers(trx, segment, catalogue, now);
    await trx
      .updateTable('segments')
      .set({ refreshed_at: isoMicros(now) })
      .where('id', '=', segment.id)
      .execute();
    await enrollJoiners(trx, deps, userId, { segmentId: segment.id });
  }
  return segments.length;
}

/** `refreshEngagementSegments` in a transaction of its own, at the app's time. */
export async function refreshEngagementSegmentsNow(deps: AppDeps, userId: number, segmentIds?: readonly number[]): Promise<void> {
  await deps.database.db.transaction().execute((trx) => refreshEngagementSegments(trx, deps, userId, segmentIds, deps.clock.now()));
}

/**
 * Brings the segments a campaign's targets name (`segments_<id>` refs, exclusions included) up to
 * date at `now`, in the caller's transaction: what a send reads when it starts or counts its
 * recipients.
 */
export function refreshTargetedSegments(trx: Db, deps: AppDeps, userId: number, refs: readonly RecipientRef[], now: Date): Promise<number> {
  const ids = refs.filter((r) => r.table === 'segments').map((r) => Number(r.id));
  return refreshEngagementSegments(trx, deps, userId, [...new Set(ids)], now);
}

/**
 * The live segments with engagement conditions that an automation which went live (not deleted)
 * targets, with their account and when they were last recomputed.
 */
async function targetedSegments(db: Db): Promise<Array<SegmentRow>> {
  const rows = await db
    .selectFrom('segments as s')
    .selectAll('s')
    .where('s.deleted_at', 'is', null)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('automations as a')
          .select('a.id')
          .whereRef('a.automation_for', '=', 's.id')
          .where('a.automation_for_table', '=', 'segments')
          .where('a.deleted_at', 'is', null)
          .where('a.live_at', 'is not', null),
      ),
    )
    .orderBy('s.id')
    .execute();
  return rows.filter(isLiveSegment);
}

/** When a segment is next due: REFRESH_EVERY_MS after its last recomputation (now when never). */
function dueAt(segment: SegmentRow, now: Date): Date {
  return segment.refreshed_at === null ? now : new Date(new Date(segment.refreshed_at).getTime() + REFRESH_EVERY_MS);
}

/** Recomputes the due automation-targeted segments, one transaction each. Returns how many. */
async function refreshDueSegments(deps: AppDeps, now: Date): Promise<number> {
  let done = 0;
  for (const segment of await targetedSegments(deps.database.db)) {
    if (dueAt(segment, now) > now) continue;
    await deps.database.db.transaction().execute((trx) => refreshEngagementSegments(trx, deps, segment.user_id, [segment.id], now));
    done++;
  }
  return done;
}

/**
 * Keeps the segments with engagement conditions that automations target current, at least hourly,
 * so the contacts who join them by the passing of time are enrolled within the hour.
 */
export const liveSegmentsTask: ScheduledTask = {
  name: 'recompute engagement segments',
  run: refreshDueSegments,
  nextDueAt: async (deps, now) => {
    const dues = (await targetedSegments(deps.database.db)).map((s) => dueAt(s, now));
    return dues.length === 0 ? null : dues.reduce((a, b) => (a < b ? a : b));
  },
};
