import type { Insertable, Updateable } from 'kysely';
import type { SenderTable } from '../../db/types.js';
import { isoMicros } from '../../util/time.js';
import { softDeleteOwned } from '../../db/soft-delete.js';
import type { Db } from '../../db/index.js';

/** The account's live senders. */
export function selectSenders(db: Db, userId: number) {
  return db.selectFrom('senders').selectAll().where('user_id', '=', userId).where('deleted_at', 'is', null);
}

/** One live sender of the account. */
export function findSender(db: Db, userId: number, id: number) {
  return selectSenders(db, userId).where('id', '=', id).executeTakeFirst();
}

/**
 * One live, verified sender of the account: what single sends and automation emails may use
 * (their rule and its failure texts are `senderFailure`'s).
 */
export function findVerifiedSender(db: Db, userId: number, id: number) {
  return selectSenders(db, userId).where('id', '=', id).where('is_verified', '=', 1).executeTakeFirst();
}

/** A live sender by id alone: the verification link carries no API keys. */
export function findSenderForVerification(db: Db, id: number) {
  return db.selectFrom('senders').selectAll().where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
}

export async function insertSender(db: Db, values: Insertable<SenderTable>): Promise<number> {
  const row = await db.insertInto('senders').values(values).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

export async function updateSenderRow(db: Db, userId: number, id: number, values: Updateable<SenderTable>, now: Date): Promise<void> {
  await db
    .updateTable('senders')
    .set({ ...values, updated_at: isoMicros(now) })
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .execute();
}

/** Soft-deletes a live sender; false when there was none. */
export async function softDeleteSender(db: Db, userId: number, id: number, now: Date): Promise<boolean> {
  return (await softDeleteOwned(db, 'senders', userId, [id], now)) > 0;
}

/**
 * Takes the sender's verification-mail slot: sets `send_at` to `now` unless a mail went out
 * after `notAfter`. One conditional UPDATE, so two racing resends cannot both win.
 */
export async function claimVerificationSlot(db: Db, userId: number, id: number, now: string, notAfter: string): Promise<boolean> {
  const res = await db
    .updateTable('senders')
    .set({ send_at: now })
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .where((eb) => eb.or([eb('send_at', 'is', null), eb('send_at', '<=', notAfter)]))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Marks a live, unverified sender verified; false when it already was (or is gone). */
export async function markSenderVerified(db: Db, id: number, fromEmail: string, now: Date): Promise<boolean> {
  const res = await db
    .updateTable('senders')
    .set({ is_verified: 1, updated_at: isoMicros(now) })
    .where('id', '=', id)
    .where('from_email', '=', fromEmail)
    .where('is_verified', '=', 0)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}
