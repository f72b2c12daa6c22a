import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import { isoMicros } from '../../util/time.js';
import { softDeleteOwned } from '../../db/soft-delete.js';

type Q = Kysely<DB>;

/** The account's live contact types, each with `contacts_count`, its live contacts (kept by triggers, migration 008). */
export function selectContactTypesWithCounts(db: Q, userId: number) {
  return db.selectFrom('contact_types as t').selectAll('t').where('t.user_id', '=', userId).where('t.deleted_at', 'is', null);
}

/** One live contact type of the account. */
export function findContactType(db: Q, userId: number, id: number) {
  return db
    .selectFrom('contact_types')
    .selectAll()
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

/** The live contact type of the account with this name (case-insensitive), other than `exceptId`. */
export function findContactTypeByName(db: Q, userId: number, name: string, exceptId?: number) {
  return db
    .selectFrom('contact_types')
    .select('id')
    .where('user_id', '=', userId)
    .where('name_key', '=', name.toLowerCase())
    .where('deleted_at', 'is', null)
    .$if(exceptId !== undefined, (q) => q.where('id', '!=', exceptId!))
    .executeTakeFirst();
}

export async function insertContactType(db: Q, userId: number, name: string, now: Date): Promise<number> {
  const at = isoMicros(now);
  const row = await db
    .insertInto('contact_types')
    .values({ user_id: userId, name, name_key: name.toLowerCase(), created_at: at, updated_at: at })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function updateContactTypeName(db: Q, userId: number, id: number, name: string, now: Date): Promise<void> {
  await db
    .updateTable('contact_types')
    .set({ name, name_key: name.toLowerCase(), updated_at: isoMicros(now) })
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .execute();
}

/** Soft-deletes the contact type and its contacts. */
export async function softDeleteContactType(db: Q, userId: number, id: number, now: Date): Promise<void> {
  await softDeleteOwned(db, 'contacts', userId, [id], now, { column: 'contact_type_id' });
  await softDeleteOwned(db, 'contact_types', userId, [id], now);
}
