import type { Kysely } from 'kysely';
import { engineOf, withId } from '../dialect.js';

/**
 * Erased addresses (docs/privacy.md): when an account erases an address, every copy of it in
 * the account's data is deleted or replaced, and one row here keeps a keyed hash of it (HMAC-SHA256
 * of the lower-case address, keyed from the app secret), so the queue can still refuse to mail it
 * for that account without the address being stored in clear.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(engineOf(db), db.schema.createTable('erased_addresses'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('erased_addresses_user_hash').on('erased_addresses').columns(['user_id', 'hash']).unique().execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('erased_addresses').execute();
}
