import { sql, type Kysely } from 'kysely';
import { engineOf } from '../dialect.js';

/**
 * PostgreSQL: the two foreign keys of `contacts` become statement-level checks. Superseded by
 * migration 007, which drops these triggers and puts declarative foreign keys back (kept as it
 * ran, since databases have applied it).
 *
 * A foreign key is checked by one trigger call per row, each a lookup and a row lock of the
 * parent: for a 200,000-row CSV import that is 400,000 calls and a third of the server's time
 * (bench:import). The checks below do the same work once per statement, over the statement's new
 * rows (a transition table), and check more: a contact's type must belong to the contact's
 * account (the type's own foreign key then vouches for the account).
 *
 * - Insert or update of contacts: every new row names a contact type of its own account, else
 *   `foreign_key_violation`. The named types are locked `FOR KEY SHARE`, as a foreign key locks its
 *   parent, so none can be deleted before the transaction ends.
 * - Delete of contact types: refused while a contact names one (the foreign key's NO ACTION).
 * - Delete of an account: its contacts go first (the foreign key's ON DELETE CASCADE); its contact
 *   types follow through their own foreign key.
 *
 * SQLite checks a foreign key with an index probe in-process; its keys stay as they are.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (engineOf(db) !== 'postgres') return;
  await sql`alter table contacts drop constraint contacts_user_id_fkey, drop constraint contacts_contact_type_id_fkey`.execute(db);

  await sql`
    create function contacts_check_parents() returns trigger language plpgsql as $$
    begin
      perform 1 from contact_types t where t.id in (select contact_type_id from new_rows) for key share of t;
      if exists (
        select 1 from new_rows n
        where not exists (select 1 from contact_types t where t.id = n.contact_type_id and t.user_id = n.user_id)
      ) then
        raise foreign_key_violation using message =
          'insert or update on table "contacts" names a contact type that is not one of the contact''s account';
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger contacts_parents_insert after insert on contacts referencing new table as new_rows for each statement execute function contacts_check_parents()`.execute(
    db,
  );
  await sql`create trigger contacts_parents_update after update on contacts referencing new table as new_rows for each statement execute function contacts_check_parents()`.execute(
    db,
  );

  await sql`
    create function contact_types_check_children() returns trigger language plpgsql as $$
    begin
      if exists (select 1 from contacts c join old_rows o on o.id = c.contact_type_id) then
        raise foreign_key_violation using message =
          'delete on table "contact_types" leaves contacts without their contact type';
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger contact_types_children_delete after delete on contact_types referencing old table as old_rows for each statement execute function contact_types_check_children()`.execute(
    db,
  );

  await sql`
    create function accounts_delete_contacts() returns trigger language plpgsql as $$
    begin
      delete from contacts where user_id = old.id;
      return old;
    end $$`.execute(db);
  await sql`create trigger accounts_delete_contacts before delete on accounts for each row execute function accounts_delete_contacts()`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  if (engineOf(db) !== 'postgres') return;
  await sql`drop trigger accounts_delete_contacts on accounts`.execute(db);
  await sql`drop function accounts_delete_contacts()`.execute(db);
  await sql`drop trigger contact_types_children_delete on contact_types`.execute(db);
  await sql`drop function contact_types_check_children()`.execute(db);
  await sql`drop trigger contacts_parents_update on contacts`.execute(db);
  await sql`drop trigger contacts_parents_insert on contacts`.execute(db);
  await sql`drop function contacts_check_parents()`.execute(db);
  await sql`
    alter table contacts
      add constraint contacts_user_id_fkey foreign key (user_id) references accounts (id) on delete cascade,
      add constraint contacts_contact_type_id_fkey foreign key (contact_type_id) references contact_types (id)`.execute(db);
}
