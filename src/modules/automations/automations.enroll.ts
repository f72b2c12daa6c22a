/**
 * Who an automation runs for. An automation has one enrollment per address of its target, ever,
 * made when the address joins or when the automation first goes live:
 * - at go-live, every current member is enrolled: by a custom automation to run the sequence, by
 *   a welcome one as already there (state `exited`: it never mails them);
 * - afterwards, every address that joins the target (a contact added, imported, updated or edited
 *   into a segment, a recipient added by hand, a live segment recomputed) and has no enrollment yet
 *   is a joiner, enrolled to run the sequence, in the transaction of the change that made it join:
 *   an acknowledged import never loses its enrollments. Segments publish their changes and
 *   `enrollSegmentJoiners` hears them; a contact type's joiners are enrolled by the audience
 *   change. An automation that went live and was paused keeps enrolling (its emails wait).
 * So every member of a gone-live automation's target has an enrollment, and "not enrolled yet" is
 * exactly "joined since".
 */
import { sql } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { MembershipListener } from '../segments/segments.changes.js';
import type { Db } from '../../db/index.js';
import { engineOf } from '../../db/dialect.js';
import { inList, pickOncePerAddress, targets, type RecipientRef } from '../../delivery/audience.js';
import { wakeWorkers } from '../../messages/mail.queue.js';
import { isoMicros } from '../../util/time.js';
import { waitMs, type AutomationRow } from './automations.types.js';

/** Contact ids per statement: well under both engines' parameter limits. */
const CHUNK = 1000;

/**
 * What a change can have brought into targets: some contacts or a whole contact type (into the
 * automations on contact types), or members of segments (only `contactIds` when given).
 */
export type JoinScope =
  { contactIds: readonly number[] } | { contactTypeId: number } | { segmentIds: readonly number[]; contactIds?: readonly number[] };

/** The automation's target as a recipient ref. */
function targetOf(a: Pick<AutomationRow, 'automation_for' | 'automation_for_table'>): RecipientRef {
  return { id: String(a.automation_for), table: a.automation_for_table === 'segments' ? 'segments' : 'contacts' };
}

/** Why a welcome automation's members at go-live never get its emails. */
export const MEMBER_BEFORE_LIVE = 'a member before the automation went live';

/**
 * Enrols the members of the automation's target not enrolled yet (only `contactIds` of them when
 * given), in the caller's transaction, with one `INSERT … SELECT` per chunk: each address once,
 * those enrolled before skipped by the unique index (a `NOT EXISTS` here made PostgreSQL probe the
 * table by a scan planned while it was empty, which grew with the statement's own rows: quadratic),
 * waiting for the first email (due after its wait from `now`), or for none while the automation
 * has no email. With `asExited` they are enrolled as having left already, with that reason.
 * Returns how many were enrolled.
 */
export async function enrollMembers(
  trx: Db,
  automation: AutomationRow,
  now: Date,
  opts: { contactIds?: readonly number[]; asExited?: string } = {},
): Promise<number> {
  const { contactIds, asExited } = opts;
  const first = await trx
    .selectFrom('automation_schedules')
    .select(['id', 'waiting_type', 'waiting_period'])
    .where('automation_id', '=', automation.id)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  const at = isoMicros(now);
  const dueAt = first && !asExited ? isoMicros(new Date(now.getTime() + waitMs(first))) : null;
  const next = asExited ? null : (first?.id ?? null);
  const members = targets(engineOf(trx), automation.user_id, [targetOf(automation)]);
  let enrolled = 0;
  const chunks = contactIds === undefined ? [undefined] : chunk(contactIds);
  for (const ids of chunks) {
    const result = await sql`
      insert into automation_enrollments
        (user_id, automation_id, contact_id, email, email_key, payload, state, exit_reason, next_schedule_id, step_base_at, due_at,
         created_at, updated_at)
      select cast(${automation.user_id} as integer), cast(${automation.id} as integer), p.contact_id, p.email, p.email_key, p.payload,
        cast(${asExited ? 'exited' : 'active'} as text), cast(${asExited ?? null} as text), cast(${next} as integer),
        cast(${at} as text), cast(${dueAt} as text), cast(${at} as text), cast(${at} as text)
      from (
        select t.contact_id, t.email, t.email_key, t.payload, ${pickOncePerAddress} as rn
        from (${members}) t
        where t.email_key is not null ${ids === undefined ? sql`` : sql`and ${inList('t.contact_id', ids)}`}
      ) p
      where p.rn = 1
      on conflict do nothing`.execute(trx);
    enrolled += Number(result.numAffectedRows ?? 0);
  }
  return enrolled;
}

function chunk(ids: readonly number[]): number[][] {
  const unique = [...new Set(ids)];
  const out: number[][] = [];
  for (let i = 0; i < unique.length; i += CHUNK) out.push(unique.slice(i, i + CHUNK));
  return out;
}

/**
 * Enrols the joiners a change brought to the account's automations that have gone live (live or
 * paused, not deleted) and whose target the change touches: a contact type's automations for
 * `contactIds` and `contactTypeId`, a segment's for `segmentIds`. Call it in the change's
 * transaction, after segment membership was brought up to date, under the account's membership
 * lock (which set-live takes too, so a go-live and a change never miss each other's members).
 */
export async function enrollJoiners(trx: Db, deps: AppDeps, userId: number, scope: JoinScope): Promise<number> {
  const contactIds = 'contactIds' in scope ? scope.contactIds : undefined;
  if (contactIds?.length === 0) return 0;
  const typeId = 'contactTypeId' in scope ? scope.contactTypeId : null;
  const segmentIds = 'segmentIds' in scope ? scope.segmentIds : null;
  if (segmentIds?.length === 0) return 0;
  const automations = await trx
    .selectFrom('automations')
    .selectAll()
    .where('user_id', '=', userId)
    .where('deleted_at', 'is', null)
    .where('live_at', 'is not', null)
    .$if(segmentIds === null, (q) => q.where('automation_for_table', '=', 'contacts'))
    .$if(typeId !== null, (q) => q.where('automation_for', '=', typeId!))
    .$if(segmentIds !== null, (q) => q.where('automation_for_table', '=', 'segments').where('automation_for', 'in', [...segmentIds!]))
    .orderBy('id')
    // KEY SHARE: an email being added (FOR UPDATE) waits for this transaction; counters and steps do not.
    .$if(engineOf(trx) === 'postgres', (q) => q.forKeyShare())
    .execute();
  const now = deps.clock.now();
  let enrolled = 0;
  for (const a of automations) enrolled += await enrollMembers(trx, a, now, { contactIds });
  // Idle workers wake at the commit: a first email that waits `instantly` is due now.
  if (enrolled > 0) await wakeWorkers(trx);
  return enrolled;
}

/** Hears segment membership changes (listed in `src/membership-listeners.ts`): enrols who joined a segment an automation is on. */
export const enrollSegmentJoiners: MembershipListener = async (trx, deps, change) => {
  await enrollJoiners(trx, deps, change.userId, { segmentIds: change.segmentIds, contactIds: change.contactIds });
};
