import type { Db } from '../../db/index.js';
import { isoMicros } from '../../util/time.js';
import type { PersonRow } from './users.schema.js';

/** The key an address is found by: trimmed, lower case. */
export const emailKey = (email: string) => email.trim().toLowerCase();

/**
 * The key of an invitation to the account `userId` for an address that belongs to a person of
 * another account: an address belongs to one person, so this one is held under a key no address
 * has (it contains spaces), which no sign-in, reset or invitation ever finds.
 */
export const heldKey = (userId: number, email: string) => `held ${userId} ${emailKey(email)}`;

/** The person of the account `userId` with this address (invited to it while the address belonged to another account's person, too). */
export function personOfAccount(db: Db, userId: number, email: string): Promise<PersonRow | undefined> {
  return db
    .selectFrom('people')
    .selectAll()
    .where('user_id', '=', userId)
    .where('email_key', 'in', [emailKey(email), heldKey(userId, email)])
    .executeTakeFirst();
}

/** The person with this address, in any account. */
export function personByEmail(db: Db, email: string): Promise<PersonRow | undefined> {
  return db.selectFrom('people').selectAll().where('email_key', '=', emailKey(email)).executeTakeFirst();
}

/** A person of the account, or undefined. */
export function findPerson(db: Db, userId: number, id: number): Promise<PersonRow | undefined> {
  return db.selectFrom('people').selectAll().where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
}

/** A person by id, in any account (a token's person). */
export function personById(db: Db, id: number): Promise<PersonRow | undefined> {
  return db.selectFrom('people').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The account's people with id below `beforeId` (all when null), newest first. */
export function peopleBefore(db: Db, userId: number, beforeId: number | null, limit: number): Promise<PersonRow[]> {
  let q = db.selectFrom('people').selectAll().where('user_id', '=', userId);
  if (beforeId !== null) q = q.where('id', '<', beforeId);
  return q.orderBy('id', 'desc').limit(limit).execute();
}

/** A page of the account's people, newest first. */
export function peoplePage(db: Db, userId: number, offset: number, limit: number): Promise<PersonRow[]> {
  return db.selectFrom('people').selectAll().where('user_id', '=', userId).orderBy('id', 'desc').offset(offset).limit(limit).execute();
}

/** How many people the account has. */
export async function countPeople(db: Db, userId: number): Promise<number> {
  const r = await db
    .selectFrom('people')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

/** How many owners of the account have accepted their invitation (the ones who keep it). */
export async function countOwners(db: Db, userId: number): Promise<number> {
  const r = await db
    .selectFrom('people')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .where('role', '=', 'owner')
    .where('password_hash', 'is not', null)
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

/** Inserts an invited person (no password yet), under `key` (the address's own by default); returns their id. */
export async function insertPerson(db: Db, userId: number, email: string, role: string, now: Date, key = emailKey(email)): Promise<number> {
  const at = isoMicros(now);
  const row = await db
    .insertInto('people')
    .values({ user_id: userId, email: email.trim(), email_key: key, role, created_at: at, updated_at: at })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Changes some of a person's columns. */
export async function updatePerson(
  db: Db,
  id: number,
  set: Partial<
    Pick<PersonRow, 'name' | 'role' | 'password_hash' | 'two_factor_secret' | 'two_factor_pending' | 'two_factor_step' | 'last_sign_in_at'>
  >,
  now: Date,
): Promise<void> {
  await db
    .updateTable('people')
    .set({ ...set, updated_at: isoMicros(now) })
    .where('id', '=', id)
    .execute();
}

/** Removes a person of the account, with their sessions, links and recovery codes. */
export async function deletePerson(db: Db, userId: number, id: number): Promise<void> {
  await db.deleteFrom('people').where('user_id', '=', userId).where('id', '=', id).execute();
}

/**
 * Holds the account's row until the transaction ends, so two changes to its owners (two demotions
 * at once) are made one after the other and the last owner cannot be lost between them.
 */
export async function lockAccount(db: Db, userId: number): Promise<void> {
  await db
    .updateTable('accounts')
    .set((eb) => ({ updated_at: eb.ref('updated_at') }))
    .where('id', '=', userId)
    .execute();
}

/** A one-time link: invitation or password reset. */
export type TokenPurpose = 'invite' | 'reset';

/** Stores a link's hash; returns its id. */
export async function insertToken(
  db: Db,
  t: { userId: number; personId: number; purpose: TokenPurpose; secretHash: string; expiresAt: Date },
  now: Date,
): Promise<number> {
  const row = await db
    .insertInto('access_tokens')
    .values({
      user_id: t.userId,
      person_id: t.personId,
      purpose: t.purpose,
      secret_hash: t.secretHash,
      expires_at: isoMicros(t.expiresAt),
      created_at: isoMicros(now),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** A link by id and purpose. */
export function findToken(db: Db, id: number, purpose: TokenPurpose) {
  return db.selectFrom('access_tokens').selectAll().where('id', '=', id).where('purpose', '=', purpose).executeTakeFirst();
}

/** Marks a link used; false when it was used already (by a request that came first). */
export async function useToken(db: Db, id: number, now: Date): Promise<boolean> {
  const r = await db
    .updateTable('access_tokens')
    .set({ used_at: isoMicros(now) })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** How many links of `purpose` a person was given since `since` (reset mails are limited). */
export async function countTokensSince(db: Db, personId: number, purpose: TokenPurpose, since: Date): Promise<number> {
  const r = await db
    .selectFrom('access_tokens')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('person_id', '=', personId)
    .where('purpose', '=', purpose)
    .where('created_at', '>=', isoMicros(since))
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}
