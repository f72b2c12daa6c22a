import type { Insertable, Updateable } from 'kysely';
import type { Db } from '../../db/index.js';
import type { SingleSendTable } from '../../db/types.js';
import { isoMicros, sqlDateTime } from '../../util/time.js';
import { moveMessages } from '../../messages/messages.writes.js';

/** The send's `status` values. */
export const STATUS = {
  initiate: 0,
  ready: 1,
  running: 2,
  completed: 3,
} as const;

/** The account's live (not deleted) single sends. */
export function selectSingleSends(db: Db, userId: number) {
  return db.selectFrom('single_sends').selectAll().where('user_id', '=', userId).where('deleted_at', 'is', null);
}

/** One live send of the account by utr, or undefined (unknown, another account's, or deleted). */
export function findSingleSend(db: Db, userId: number, utr: string) {
  return selectSingleSends(db, userId).where('utr', '=', utr).executeTakeFirst();
}

/** Saves a new send; returns its id. */
export async function insertSingleSend(db: Db, values: Insertable<SingleSendTable>): Promise<number> {
  const row = await db.insertInto('single_sends').values(values).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/**
 * Replaces a send's fields only while its status is one of `statuses` (a worker may start it at
 * any moment: the condition makes the check and the write one step). Returns whether it changed.
 */
export async function updateSendIfStatus(
  db: Db,
  userId: number,
  id: number,
  statuses: number[],
  values: Updateable<SingleSendTable>,
  now: Date,
): Promise<boolean> {
  const res = await db
    .updateTable('single_sends')
    .set({ ...values, updated_at: isoMicros(now) })
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .where('status', 'in', statuses)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** The account's live sends among `utrs` (id and status). */
export function findSendsByUtr(db: Db, userId: number, utrs: string[]) {
  return db
    .selectFrom('single_sends')
    .select(['id', 'status'])
    .where('user_id', '=', userId)
    .where('utr', 'in', utrs)
    .where('deleted_at', 'is', null)
    .execute();
}

/** Soft-deletes the account's live sends among `ids`; returns how many. */
export async function softDeleteSends(db: Db, userId: number, ids: number[], now: Date): Promise<number> {
  if (ids.length === 0) return 0;
  const at = isoMicros(now);
  const res = await db
    .updateTable('single_sends')
    .set({ deleted_at: at, updated_at: at })
    .where('user_id', '=', userId)
    .where('id', 'in', ids)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/**
 * Cancels what is left of sends: their messages still waiting in the queue. Messages a worker is
 * sending at this moment finish (their renderer sees the deleted send and skips them if they come
 * back after a crash).
 */
export async function cancelQueuedMessages(db: Db, sendIds: number[], now: Date): Promise<void> {
  await moveMessages(db, { single_send_id: sendIds }, { from: ['queued'], to: 'cancelled', now });
}

/** The messages of `sendIds` whose recipient opened them (for `unique_open_token`). */
export function selectOpenedMessages(db: Db, sendIds: number[]) {
  return db
    .selectFrom('mail_messages')
    .select(['id', 'single_send_id', 'email'])
    .where('single_send_id', 'in', sendIds)
    .where('opens', '>', 0)
    .orderBy('id')
    .execute();
}

/** Ready sends whose time has come (oldest due first), at most `limit`. */
export function selectDueSends(db: Db, now: Date, limit: number) {
  return db
    .selectFrom('single_sends')
    .select('id')
    .where('status', '=', STATUS.ready)
    .where('due_at', '<=', isoMicros(now))
    .where('deleted_at', 'is', null)
    .orderBy('due_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** When the next ready send comes due (UTC), or null when none waits. */
export async function nextSendDueAt(db: Db): Promise<Date | null> {
  const row = await db
    .selectFrom('single_sends')
    .select((eb) => eb.fn.min('due_at').as('at'))
    .where('status', '=', STATUS.ready)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return row?.at ? new Date(row.at) : null;
}

/**
 * Moves a due send from ready to running and returns it; undefined when another worker got there
 * first (or it was updated to a later time, or deleted, meanwhile). Run in the transaction that
 * resolves its recipients, so nobody sees a running send without its messages.
 */
export async function claimDueSend(trx: Db, id: number, now: Date) {
  const at = isoMicros(now);
  const res = await trx
    .updateTable('single_sends')
    .set({ status: STATUS.running, updated_at: at })
    .where('id', '=', id)
    .where('status', '=', STATUS.ready)
    .where('due_at', '<=', at)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) return undefined;
  return trx.selectFrom('single_sends').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** Sets the number of messages a send handed to delivery. */
export async function setTriggered(trx: Db, id: number, triggered: number): Promise<void> {
  await trx.updateTable('single_sends').set({ triggered }).where('id', '=', id).execute();
}

/**
 * Running sends (deleted ones included) with no message left to send, at most `limit`; an A/B
 * test still waiting for its winner (not deleted) is not finished.
 */
export function selectFinishedSends(db: Db, limit: number) {
  return db
    .selectFrom('single_sends as s')
    .select('s.id')
    .where('s.status', '=', STATUS.running)
    .where((eb) => eb.or([eb('s.ab_test', '=', 0), eb('s.ab_winner', 'is not', null), eb('s.deleted_at', 'is not', null)]))
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('mail_messages as m')
            .select('m.id')
            .whereRef('m.single_send_id', '=', 's.id')
            .where('m.state', 'in', ['queued', 'sending']),
        ),
      ),
    )
    .orderBy('s.id')
    .limit(limit)
    .execute();
}

/** Marks a running send completed and returns it; undefined when another worker completed it first. */
export async function completeSend(trx: Db, id: number, now: Date) {
  const res = await trx
    .updateTable('single_sends')
    .set({
      status: STATUS.completed,
      sent_at: sqlDateTime(now),
      updated_at: isoMicros(now),
    })
    .where('id', '=', id)
    .where('status', '=', STATUS.running)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) return undefined;
  return trx.selectFrom('single_sends').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** Live contact types of the account among `ids` (the ids found). */
export async function liveContactTypeIds(db: Db, userId: number, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('contact_types')
    .select('id')
    .where('user_id', '=', userId)
    .where('id', 'in', ids)
    .where('deleted_at', 'is', null)
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** Live segments of the account among `ids` (the ids found). */
export async function liveSegmentIds(db: Db, userId: number, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('segments')
    .select('id')
    .where('user_id', '=', userId)
    .where('id', 'in', ids)
    .where('deleted_at', 'is', null)
    .execute();
  return new Set(rows.map((r) => r.id));
}
