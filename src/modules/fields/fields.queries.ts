import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import { isoMicros } from '../../util/time.js';
import { jsonRemove, engineOf } from '../../db/dialect.js';

type Q = Kysely<DB>;

/** Reserved fields (user_id null) or the account's custom fields. */
export function selectFields(db: Q, userId: number | null) {
  const q = db.selectFrom('fields').selectAll();
  return userId === null ? q.where('user_id', 'is', null) : q.where('user_id', '=', userId);
}

/** Every custom field of the account, by name. */
export async function customFieldsByName(db: Q, userId: number): Promise<Map<string, { id: number; field_type: string }>> {
  const rows = await db.selectFrom('fields').select(['id', 'field_name', 'field_type']).where('user_id', '=', userId).execute();
  return new Map(rows.map((r) => [r.field_name, { id: r.id, field_type: r.field_type }]));
}

export function findCustomField(db: Q, userId: number, id: number) {
  return db.selectFrom('fields').selectAll().where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
}

export async function insertCustomField(db: Q, userId: number, name: string, type: string, now: Date): Promise<number> {
  const at = isoMicros(now);
  const row = await db
    .insertInto('fields')
    .values({ user_id: userId, field_name: name, field_type: type, is_reserved: 0, created_at: at, updated_at: at })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Deletes a custom field and drops its values from every contact of the account. */
export async function deleteCustomFieldAndValues(db: Q, userId: number, id: number, name: string): Promise<void> {
  await db
    .updateTable('contacts')
    .set({ custom_field: jsonRemove(engineOf(db), 'custom_field', name) })
    .where('user_id', '=', userId)
    .where('custom_field', 'is not', null)
    .execute();
  await db.deleteFrom('fields').where('user_id', '=', userId).where('id', '=', id).execute();
}
