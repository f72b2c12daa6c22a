import { sql, type Kysely } from 'kysely';
import { engineOf } from '../dialect.js';

/**
 * Live-contact totals kept by the database: `contact_types.contacts_count` is the number of live
 * contacts (`deleted_at` null) of the type, moved by triggers in the same transaction as the
 * change that moves it. The contact-type list shows it as `contacts_count`, and the contact list's
 * `meta.total` is its sum over the account's few types, so neither counts contacts on a read.
 *
 * Triggers rather than code in the query functions: they cannot miss a path (insert, update of
 * the type or of `deleted_at`, soft or hard delete, an account's cascade, a CSV upsert, plain SQL).
 *
 * - SQLite: row triggers (SQLite has no other kind). A row whose change leaves the count as it was
 *   (an upsert's update, an edit of a name) fires nothing: the update trigger watches only
 *   `contact_type_id` and `deleted_at`, and its WHEN clause skips changes that move no count.
 * - PostgreSQL: statement triggers with transition tables, so a statement of 1,000 rows (a CSV
 *   import's batch, a bulk delete) costs one update per contact type it touches, not one per row.
 *   The touched types are locked in id order first, so two statements that each touch several
 *   types cannot deadlock on them. TRUNCATE zeroes every count.
 *
 * Written for any schema from 006 on: it reads and writes only the columns `contacts.
 * contact_type_id`, `contacts.deleted_at` and `contact_types.contacts_count`. A later migration
 * that rebuilds `contacts` on SQLite (copy, drop, rename) drops these triggers with the old table
 * and must create them again (test/db/list-totals.test.ts fails otherwise).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('contact_types')
    .addColumn('contacts_count', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`
    update contact_types set contacts_count =
      (select count(*) from contacts c where c.contact_type_id = contact_types.id and c.deleted_at is null)`.execute(db);
  // The account's total sums its types' counts, live or deleted (a deleted type's count is 0).
  await db.schema.createIndex('contact_types_user').on('contact_types').column('user_id').execute();

  if (engineOf(db) === 'sqlite') {
    await sql`
      create trigger contacts_count_insert after insert on contacts when new.deleted_at is null begin
        update contact_types set contacts_count = contacts_count + 1 where id = new.contact_type_id;
      end`.execute(db);
    await sql`
      create trigger contacts_count_delete after delete on contacts when old.deleted_at is null begin
        update contact_types set contacts_count = contacts_count - 1 where id = old.contact_type_id;
      end`.execute(db);
    await sql`
      create trigger contacts_count_update after update of contact_type_id, deleted_at on contacts
      when (old.deleted_at is null) <> (new.deleted_at is null)
        or (new.deleted_at is null and old.contact_type_id <> new.contact_type_id) begin
        update contact_types set contacts_count = contacts_count - 1 where id = old.contact_type_id and old.deleted_at is null;
        update contact_types set contacts_count = contacts_count + 1 where id = new.contact_type_id and new.deleted_at is null;
      end`.execute(db);
    return;
  }

  // One function for the three events: each branch reads only the transition tables its event has,
  // once, into the per-type deltas; then the types are locked in id order and updated.
  await sql`
    create function contacts_count_apply() returns trigger language plpgsql as $$
    declare
      ids int[];
      deltas bigint[];
    begin
      if tg_op = 'INSERT' then
        select array_agg(contact_type_id order by contact_type_id), array_agg(n order by contact_type_id) into ids, deltas
          from (select contact_type_id, count(*) as n from new_rows where deleted_at is null group by 1) d;
      elsif tg_op = 'DELETE' then
        select array_agg(contact_type_id order by contact_type_id), array_agg(-n order by contact_type_id) into ids, deltas
          from (select contact_type_id, count(*) as n from old_rows where deleted_at is null group by 1) d;
      else
        select array_agg(contact_type_id order by contact_type_id), array_agg(n order by contact_type_id) into ids, deltas
          from (
            select contact_type_id, sum(n) as n from (
              select contact_type_id, 1 as n from new_rows where deleted_at is null
              union all
              select contact_type_id, -1 from old_rows where deleted_at is null
            ) m group by 1 having sum(n) <> 0
          ) d;
      end if;
      if ids is null then
        return null;
      end if;
      perform 1 from contact_types where id = any(ids) order by id for no key update;
      update contact_types t set contacts_count = t.contacts_count + d.n
        from unnest(ids, deltas) as d(id, n) where t.id = d.id;
      return null;
    end $$`.execute(db);
  for (const [event, table] of [
    ['insert', 'new table as new_rows'],
    ['delete', 'old table as old_rows'],
    ['update', 'old table as old_rows new table as new_rows'],
  ]) {
    await sql`create trigger ${sql.raw(`contacts_count_${event}`)} after ${sql.raw(event)} on contacts referencing ${sql.raw(table)} for each statement execute function contacts_count_apply()`.execute(
      db,
    );
  }
  await sql`
    create function contacts_count_truncate() returns trigger language plpgsql as $$
    begin
      update contact_types set contacts_count = 0 where contacts_count <> 0;
      return null;
    end $$`.execute(db);
  await sql`create trigger contacts_count_truncate after truncate on contacts for each statement execute function contacts_count_truncate()`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  const pg = engineOf(db) === 'postgres';
  for (const event of ['insert', 'delete', 'update'])
    await sql`drop trigger ${sql.raw(`contacts_count_${event}`)} ${sql.raw(pg ? 'on contacts' : '')}`.execute(db);
  if (pg) {
    await sql`drop trigger contacts_count_truncate on contacts`.execute(db);
    await sql`drop function contacts_count_truncate()`.execute(db);
    await sql`drop function contacts_count_apply()`.execute(db);
  }
  await db.schema.dropIndex('contact_types_user').execute();
  await db.schema.alterTable('contact_types').dropColumn('contacts_count').execute();
}
