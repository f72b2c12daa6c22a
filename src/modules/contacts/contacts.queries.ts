import type { CompiledQuery, Insertable, Kysely, Selectable, Updateable } from 'kysely';
import { byteOrder, engineOf, toCount, type Engine } from '../../db/dialect.js';
import type { ContactTable, DB } from '../../db/types.js';
import { isoMicros } from '../../util/time.js';
import { softDeleteOwned } from '../../db/soft-delete.js';

type Q = Kysely<DB>;
type ContactRow = Selectable<ContactTable>;

/** The account's live contacts. */
export function selectContacts(db: Q, userId: number) {
  return db.selectFrom('contacts').selectAll().where('user_id', '=', userId).where('deleted_at', 'is', null);
}

/** The highest code point: every text that starts with a prefix sorts below prefix + this. */
const TOP = String.fromCodePoint(0x10ffff);

/**
 * A page of the account's live contacts whose lower-cased address starts with `prefix`, in address
 * order: a range read of the index `contacts_user_email` (migration 018), whose cost follows the
 * page, not the account's size. An empty prefix lists the newest first, like the list.
 */
export function searchContactRows(db: Q, userId: number, prefix: string, offset: number, limit: number): Promise<ContactRow[]> {
  if (prefix === '') return selectContacts(db, userId).orderBy('id', 'desc').limit(limit).offset(offset).execute();
  const email = byteOrder(engineOf(db), 'email_key');
  return selectContacts(db, userId)
    .where(email, '>=', prefix)
    .where(email, '<', prefix + TOP)
    .orderBy(email)
    .orderBy('id')
    .limit(limit)
    .offset(offset)
    .execute();
}

// `findContact` serves GET /contacts/details, a hot path: its query is compiled once per engine
// (SQL text differs) and then run with fresh parameters, skipping Kysely's build + compile.
const findContactSql = new Map<Engine, CompiledQuery<ContactRow>>();

/** The compiled query of the account's live contact `id` (compiled once per engine). */
export function findContactQuery(db: Q, userId: number, id: number): CompiledQuery<ContactRow> {
  const engine = engineOf(db);
  let compiled = findContactSql.get(engine);
  if (!compiled) {
    compiled = selectContacts(db, 0).where('id', '=', 0).compile();
    // Parameters follow the where() calls: user_id, then id (deleted_at is null has none).
    if (compiled.parameters.length !== 2) throw new Error('findContact: selectContacts changed its parameters');
    findContactSql.set(engine, compiled);
  }
  return { ...compiled, parameters: [userId, id] };
}

/** The account's live contact `id`, or undefined. */
export async function findContact(db: Q, userId: number, id: number): Promise<ContactRow | undefined> {
  const { rows } = await db.executeQuery(findContactQuery(db, userId, id));
  return rows[0];
}

/** Id of the live contact with this email (case-insensitive) in the contact type, other than `exceptId`. */
export async function findContactIdByEmail(db: Q, userId: number, typeId: number, email: string, exceptId?: number) {
  const row = await db
    .selectFrom('contacts')
    .select('id')
    .where('user_id', '=', userId)
    .where('contact_type_id', '=', typeId)
    .where('email_key', '=', email.toLowerCase())
    .where('deleted_at', 'is', null)
    .$if(exceptId !== undefined, (q) => q.where('id', '!=', exceptId!))
    .executeTakeFirst();
  return row?.id;
}

export async function insertContact(
  db: Q,
  values: Omit<Insertable<ContactTable>, 'created_at' | 'updated_at'>,
  now: Date,
): Promise<number> {
  const at = isoMicros(now);
  const row = await db
    .insertInto('contacts')
    .values({ ...values, created_at: at, updated_at: at })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function updateContactRow(db: Q, userId: number, id: number, values: Updateable<ContactTable>, now: Date): Promise<void> {
  await db
    .updateTable('contacts')
    .set({ ...values, updated_at: isoMicros(now) })
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .execute();
}

/** Soft-deletes the account's live contacts among `ids`; returns how many. */
export function softDeleteContacts(db: Q, userId: number, ids: number[], now: Date): Promise<number> {
  return softDeleteOwned(db, 'contacts', userId, ids, now);
}

/**
 * How many live contacts the account has: the sum of its contact types' `contacts_count`, which
 * triggers keep exact (migration 008), so the cost does not grow with the account's contacts.
 */
export async function countContacts(db: Q, userId: number): Promise<number> {
  const row = await db
    .selectFrom('contact_types')
    .select((eb) => eb.fn.sum<number | string | null>('contacts_count').as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return toCount(row?.n);
}

/** Contact types by id, for the list's `contact_type` objects. */
export function contactTypesByIds(db: Q, userId: number, ids: number[]) {
  return db.selectFrom('contact_types').selectAll().where('user_id', '=', userId).where('id', 'in', ids).execute();
}
