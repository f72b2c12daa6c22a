import type { Kysely } from 'kysely';
import { engineOf, withId } from '../dialect.js';

/**
 * Sending domains (docs/sending-domains.md): one row per domain of an account, with its own DKIM
 * key. `domain` is the A-label (lower case, no trailing dot); `private_key` is the PEM key sealed
 * with the app secret; `checks` the last checks as JSON (null until the first); `status`
 * `pending`, `verified` or `failed`; `last_checked_at` when the last check ran (the hourly
 * re-check takes the oldest first).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const engine = engineOf(db);
  await withId(engine, db.schema.createTable('sending_domains'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('dkim_selector', 'text', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('private_key', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('checks', 'text')
    .addColumn('last_checked_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('sending_domains_user_domain', ['user_id', 'domain'])
    .execute();
  await db.schema.createIndex('sending_domains_checked').on('sending_domains').column('last_checked_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sending_domains').execute();
}
