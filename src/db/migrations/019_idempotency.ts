import type { Kysely } from 'kysely';
import { engineOf, withId } from '../dialect.js';

/**
 * Idempotency keys (docs/idempotency.md): one row per account and `Idempotency-Key`.
 *
 * - `state` is `running` from the claim (made before the handler runs) until the answer is stored,
 *   then `done` with `status`, `headers` (JSON object of the headers replayed) and `body`.
 * - `request_hash` fingerprints method, URL and body; null while a streamed upload is still read.
 * - `expires_at`: a `running` row is abandoned past it (claim + 10 minutes), a `done` row expired
 *   (claim + 24 hours); either way the next claim of the key takes the row over, and claims now and
 *   then delete such rows among the oldest (by `id`: no index on `expires_at`, one page fewer written
 *   by every claim and every stored answer).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(engineOf(db), db.schema.createTable('idempotency_keys'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('headers', 'text')
    .addColumn('body', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('idempotency_keys_user_key', ['user_id', 'key'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').execute();
}
