import { sql, type Kysely } from 'kysely';
import { engineOf, withId } from '../dialect.js';

/**
 * Unsubscribe groups and unsubscribers (global entries have `unsubscribe_groups_id` null).
 * Uniqueness of an address per (account, group) is enforced by two partial unique indexes, because
 * a plain UNIQUE index treats NULL group ids as distinct; partial indexes work alike on both engines.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const engine = engineOf(db);

  await withId(engine, db.schema.createTable('unsubscribe_groups'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('rand_id', 'text', (c) => c.notNull().unique())
    .addColumn('group_name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('is_display', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('deleted_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('unsubscribe_groups_user_id').on('unsubscribe_groups').columns(['user_id', 'id']).execute();

  await withId(engine, db.schema.createTable('unsubscribers'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('unsubscribe_groups_id', 'integer', (c) => c.references('unsubscribe_groups.id').onDelete('cascade'))
    .addColumn('email_address', 'text', (c) => c.notNull())
    .addColumn('email_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('unsubscribers_global_email')
    .on('unsubscribers')
    .columns(['user_id', 'email_key'])
    .unique()
    .where(sql.ref('unsubscribe_groups_id'), 'is', null)
    .execute();
  await db.schema
    .createIndex('unsubscribers_group_email')
    .on('unsubscribers')
    .columns(['unsubscribe_groups_id', 'email_key'])
    .unique()
    .where(sql.ref('unsubscribe_groups_id'), 'is not', null)
    .execute();
  // Suppression look-ups: every entry (global and groups) of an address in one index range.
  await db.schema.createIndex('unsubscribers_user_email').on('unsubscribers').columns(['user_id', 'email_key']).execute();
  // Lists and counts, newest first, per (account, group).
  await db.schema
    .createIndex('unsubscribers_user_group_id')
    .on('unsubscribers')
    .columns(['user_id', 'unsubscribe_groups_id', 'id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['unsubscribers', 'unsubscribe_groups']) await db.schema.dropTable(t).execute();
}
