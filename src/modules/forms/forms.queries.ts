import type { Insertable, Updateable } from 'kysely';
import type { Db } from '../../db/index.js';
import type { ContactConsentTable, SignupFormTable, SignupPendingTable } from '../../db/types.js';
import { isoMicros } from '../../util/time.js';

/** The account's forms. */
export function selectForms(db: Db, userId: number) {
  return db.selectFrom('signup_forms').selectAll().where('user_id', '=', userId);
}

/** One form of the account. */
export function findForm(db: Db, userId: number, id: number) {
  return selectForms(db, userId).where('id', '=', id).executeTakeFirst();
}

/** A form by id alone: the public sign-up route carries no keys. */
export function findFormById(db: Db, id: number) {
  return db.selectFrom('signup_forms').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function insertForm(
  db: Db,
  values: Omit<Insertable<SignupFormTable>, 'created_at' | 'updated_at'>,
  now: Date,
): Promise<number> {
  const at = isoMicros(now);
  const row = await db
    .insertInto('signup_forms')
    .values({ ...values, created_at: at, updated_at: at })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function updateFormRow(db: Db, userId: number, id: number, values: Updateable<SignupFormTable>, now: Date): Promise<void> {
  await db
    .updateTable('signup_forms')
    .set({ ...values, updated_at: isoMicros(now) })
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .execute();
}

/** Deletes a form of the account (its pending sign-ups go with it; consents stay); false when there was none. */
export async function deleteForm(db: Db, userId: number, id: number): Promise<boolean> {
  const res = await db.deleteFrom('signup_forms').where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

export async function insertConsent(db: Db, values: Insertable<ContactConsentTable>): Promise<void> {
  await db.insertInto('contact_consents').values(values).execute();
}

export async function insertPending(db: Db, values: Insertable<SignupPendingTable>): Promise<void> {
  await db.insertInto('signup_pending').values(values).execute();
}

/**
 * Deletes up to `limit` sign-ups that expired before `now`: the cleanup done at each sign-up, so
 * the table stays bounded without a timer.
 */
export async function deleteExpiredPending(db: Db, now: string, limit = 100): Promise<void> {
  await db
    .deleteFrom('signup_pending')
    .where('id', 'in', (eb) => eb.selectFrom('signup_pending').select('id').where('expires_at', '<=', now).limit(limit))
    .execute();
}

/** Takes the pending sign-up of a token's hash: deleted and returned, so a link confirms once. */
export function takePending(db: Db, tokenHash: string) {
  return db.deleteFrom('signup_pending').where('token_hash', '=', tokenHash).returningAll().executeTakeFirst();
}

/** The pending sign-up of a token's hash, left as it is (the confirmation page). */
export function findPending(db: Db, tokenHash: string) {
  return db.selectFrom('signup_pending').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

/** Deletes the address's other pending sign-ups of the form (once one is confirmed). */
export async function deletePendingOf(db: Db, formId: number, emailKey: string): Promise<void> {
  await db.deleteFrom('signup_pending').where('form_id', '=', formId).where('email_key', '=', emailKey).execute();
}
