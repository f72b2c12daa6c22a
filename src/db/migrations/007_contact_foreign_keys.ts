import { sql, type Kysely, type RawBuilder } from 'kysely';
import { engineOf } from '../dialect.js';
import * as m005 from './005_contact_parent_checks.js';

/**
 * Contacts' parents are declarative foreign keys on both engines, and the database itself
 * enforces that a contact's type belongs to the contact's own account:
 *
 * - `contacts (user_id) → accounts (id) ON DELETE CASCADE`: deleting an account deletes its
 *   contacts (its contact types go through their own key);
 * - `contacts (contact_type_id, user_id) → contact_types (id, user_id)`, NO ACTION: a contact names
 *   a type of its own account, and a type that contacts name cannot be deleted. The key needs a
 *   unique `(id, user_id)` on contact_types (`id` alone is unique already, so it changes nothing
 *   else).
 *
 * PostgreSQL: migration 005's statement-level triggers and their functions go, and the keys come
 * back. SQLite cannot add a constraint to a table, so `contacts` is rebuilt (SQLite's documented
 * procedure: new table, copy, drop, rename), keeping its rows, ids, AUTOINCREMENT counter and
 * indexes.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create unique index contact_types_id_user on contact_types (id, user_id)`.execute(db);
  if (engineOf(db) === 'postgres') {
    await dropParentChecks(db);
    await sql`
      alter table contacts
        add constraint contacts_user_id_fkey foreign key (user_id) references accounts (id) on delete cascade,
        add constraint contacts_contact_type_fkey foreign key (contact_type_id, user_id) references contact_types (id, user_id)`.execute(
      db,
    );
    return;
  }
  await rebuildSqliteContacts(db, sql`foreign key (contact_type_id, user_id) references contact_types (id, user_id)`);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (engineOf(db) === 'postgres') {
    await sql`alter table contacts drop constraint contacts_contact_type_fkey, drop constraint contacts_user_id_fkey`.execute(db);
    await sql`
      alter table contacts
        add constraint contacts_user_id_fkey foreign key (user_id) references accounts (id) on delete cascade,
        add constraint contacts_contact_type_id_fkey foreign key (contact_type_id) references contact_types (id)`.execute(db);
    await m005.up(db); // back to 005's triggers
  } else {
    await rebuildSqliteContacts(db, sql`foreign key (contact_type_id) references contact_types (id)`);
  }
  await sql`drop index contact_types_id_user`.execute(db);
}

/** Removes what migration 005 created on PostgreSQL (its triggers and their functions). */
async function dropParentChecks(db: Kysely<any>): Promise<void> {
  await sql`drop trigger accounts_delete_contacts on accounts`.execute(db);
  await sql`drop function accounts_delete_contacts()`.execute(db);
  await sql`drop trigger contact_types_children_delete on contact_types`.execute(db);
  await sql`drop function contact_types_check_children()`.execute(db);
  await sql`drop trigger contacts_parents_update on contacts`.execute(db);
  await sql`drop trigger contacts_parents_insert on contacts`.execute(db);
  await sql`drop function contacts_check_parents()`.execute(db);
}

/** Every column of `contacts`, in table order. */
const COLUMNS = [
  'id',
  'user_id',
  'contact_type_id',
  'first_name',
  'last_name',
  'email',
  'email_key',
  'alt_email',
  'country',
  'state',
  'city',
  'address_line1',
  'address_line2',
  'state_province_region',
  'postal_code',
  'custom_field',
  'deleted_at',
  'created_at',
  'updated_at',
];

/**
 * SQLite: `contacts` again with the same columns and `typeKey` as the contact type's foreign key,
 * in one transaction (Kysely runs SQLite migrations outside one). The indexes are re-created from
 * their own SQL, so any index a migration added is kept too; no other table references contacts.
 */
async function rebuildSqliteContacts(db: Kysely<any>, typeKey: RawBuilder<unknown>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const indexes = await sql<{
      sql: string;
    }>`select sql from sqlite_master where type = 'index' and tbl_name = 'contacts' and sql is not null`.execute(trx);
    const counter = await sql<{ seq: number }>`select seq from sqlite_sequence where name = 'contacts'`.execute(trx);
    await sql`
      create table contacts_rebuilt (
        id integer primary key autoincrement,
        user_id integer not null references accounts (id) on delete cascade,
        contact_type_id integer not null,
        first_name text not null default '',
        last_name text not null default '',
        email text not null,
        email_key text not null,
        alt_email text,
        country text not null,
        state text,
        city text,
        address_line1 text,
        address_line2 text,
        state_province_region text,
        postal_code text,
        custom_field text,
        deleted_at text,
        created_at text not null,
        updated_at text not null,
        ${typeKey}
      )`.execute(trx);
    const columns = sql.join(COLUMNS.map((c) => sql.ref(c)));
    await sql`insert into contacts_rebuilt (${columns}) select ${columns} from contacts order by id`.execute(trx);
    await sql`drop table contacts`.execute(trx);
    await sql`alter table contacts_rebuilt rename to contacts`.execute(trx);
    for (const { sql: text } of indexes.rows) await sql.raw(text).execute(trx);
    // Ids of contacts deleted for good (an account's, with it) are never handed out again.
    const seq = counter.rows[0]?.seq;
    const copied = (await sql<{ seq: number }>`select seq from sqlite_sequence where name = 'contacts'`.execute(trx)).rows[0]?.seq;
    if (seq === undefined || (copied !== undefined && copied >= seq)) return;
    if (copied === undefined) await sql`insert into sqlite_sequence (name, seq) values ('contacts', ${seq})`.execute(trx);
    else await sql`update sqlite_sequence set seq = ${seq} where name = 'contacts'`.execute(trx);
  });
}
