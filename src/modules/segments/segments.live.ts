/**
 * Live segments: those whose conditions name engagement (`engagement`, `single_send`). Their
 * membership changes without any contact changing: a window slides past a date, a person opens a
 * message. Nothing that reads recomputes them (a read never writes). They are recomputed:
 * - by the scheduler, each at least hourly (`liveSegmentsTask`), so the counts and lists the API
 *   shows are at most an hour old, and the contacts who join by the passing of time are enrolled
 *   in the automations on the segment within the hour;
 * - in the transaction that starts a send (or sends an A/B test's winner to the rest), so a send
 *   goes to the members of that moment;
 * - when an automation on the segment goes live, so it enrols the members of that moment.
 * Every recomputation publishes its change, as a contact change does.
 */
import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/index.js';
import { lockAccountSegments } from '../../db/dialect.js';
import type { ScheduledTask } from '../../jobs/scheduler.lane.js';
import type { RecipientRef } from '../../delivery/audience.js';
import { isoMicros } from '../../util/time.js';
import { publishMembershipChange } from './segments.changes.js';
import { dependsOnEngagement, ENGAGEMENT_FIELD, SINGLE_SEND_FIELD } from './segments.engagement.js';
import { catalogueOf, refreshSegmentMembers } from './segments.membership.js';
import type { SegmentRow } from './segments.schema.js';

/** How often the scheduler recomputes each live segment at least. */
export const REFRESH_EVERY_MS = 60 * 60 * 1000;

function fieldsOf(segment: Pick<SegmentRow, 'select_field'>): string[] {
  try {
    const v = JSON.parse(segment.select_field);
    return Array.isArray(v) ? v.map(String) : [];
  } catch {
    return [];
  }
}

/** Whether the segment's membership depends on engagement (and so on the time it is computed). */
export function isLiveSegment(segment: Pick<SegmentRow, 'select_field'>): boolean {
  return dependsOnEngagement(fieldsOf(segment));
}

/**
 * Recomputes, at `now` and in the caller's transaction, the membership of the account's live
 * segments among `segmentIds` (every live segment of the account when undefined), records when,
 * and publishes the change. Other segments are left alone (contact changes keep them current).
 * Returns how many it recomputed.
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
  for (const segment of segments) await refreshSegmentMembers(trx, segment, catalogue, now);
  await trx
    .updateTable('segments')
    .set({ refreshed_at: isoMicros(now) })
    .where(
      'id',
      'in',
      segments.map((s) => s.id),
    )
    .execute();
  await publishMembershipChange(trx, deps, { userId, segmentIds: segments.map((s) => s.id) });
  return segments.length;
}

/**
 * Brings the segments a campaign's targets name (`segments_<id>` refs, exclusions included) up to
 * date at `now`, in the caller's transaction: what a send reads when it starts.
 */
export function refreshTargetedSegments(trx: Db, deps: AppDeps, userId: number, refs: readonly RecipientRef[], now: Date): Promise<number> {
  const ids = refs.filter((r) => r.table === 'segments').map((r) => Number(r.id));
  return refreshEngagementSegments(trx, deps, userId, [...new Set(ids)], now);
}

/** Every live segment of every account, with when it was last recomputed (a prefilter in SQL, the exact test here). */
async function liveSegments(db: Db): Promise<Array<Pick<SegmentRow, 'id' | 'user_id' | 'select_field' | 'refreshed_at'>>> {
  const rows = await db
    .selectFrom('segments')
    .select(['id', 'user_id', 'select_field', 'refreshed_at'])
    .where('deleted_at', 'is', null)
    .where((eb) => eb.or([ENGAGEMENT_FIELD, SINGLE_SEND_FIELD].map((f) => eb('select_field', 'like', `%"${f}"%`))))
    .orderBy('id')
    .execute();
  return rows.filter(isLiveSegment);
}

/** When a segment is next due: REFRESH_EVERY_MS after its last recomputation (now when never). */
function dueAt(segment: Pick<SegmentRow, 'refreshed_at'>, now: Date): Date {
  return segment.refreshed_at === null ? now : new Date(new Date(segment.refreshed_at).getTime() + REFRESH_EVERY_MS);
}

/**
 * Recomputes the live segments that came due, one transaction each. A segment another process
 * recomputed meanwhile (its `refreshed_at` moved) is skipped. Returns how many it recomputed.
 */
async function refreshDueSegments(deps: AppDeps, now: Date): Promise<number> {
  let done = 0;
  for (const segment of await liveSegments(deps.database.db)) {
    if (dueAt(segment, now) > now) continue;
    done += await deps.database.db.transaction().execute(async (trx) => {
      await lockAccountSegments(trx, segment.user_id);
      const current = await trx.selectFrom('segments').select('refreshed_at').where('id', '=', segment.id).executeTakeFirst();
      if (!current || current.refreshed_at !== segment.refreshed_at) return 0;
      return refreshEngagementSegments(trx, deps, segment.user_id, [segment.id], now);
    });
  }
  return done;
}

/**
 * Keeps every live segment current, each at least hourly: its counts and members as the API
 * shows them, and the enrolments of the automations on it.
 */
export const liveSegmentsTask: ScheduledTask = {
  name: 'recompute live segments',
  run: refreshDueSegments,
  nextDueAt: async (deps, now) => {
    const dues = (await liveSegments(deps.database.db)).map((s) => dueAt(s, now));
    return dues.length === 0 ? null : dues.reduce((a, b) => (a < b ? a : b));
  },
};
