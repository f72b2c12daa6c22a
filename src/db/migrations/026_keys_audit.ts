import { sql, type Kysely } from 'kysely';
import { engineOf, withId } from '../dialect.js';

/**
 * Many keys per account, and the audit log (docs/security.md).
 *
 * - `api_keys`: an account's keys, each named, with its scopes (`full`, or a JSON array of scopes),
 *   who made it (null for keys made by the command line) and when it was last used. The secret is
 *   stored only as its SHA-256 hash, as the account's key pair was. Each account's existing pair
 *   moves here as the key named `Default` with `full` scopes; `accounts.secret_hash` is emptied
 *   (`accounts.public_key` keeps the public key of the account's `Default` key, an identifier only).
 * - PostgreSQL: a change to a key that matters to authentication (made, revoked, new secret, scopes
 *   or name) notifies the channel that servers hear account changes on, so every server forgets the
 *   key at once; `last_used_at` moving does not.
 * - `audit_log`: one entry per change made through the API, sign-in and sign-out, with the actor's
 *   name as it was then. Listed newest first per account; deleted after 400 days (by `created_at`).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const engine = engineOf(db);
  await withId(engine, db.schema.createTable('api_keys'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull().unique())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_by_type', 'text')
    .addColumn('created_by_id', 'integer')
    .addColumn('created_by_name', 'text')
    .addColumn('last_used_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('api_keys_user').on('api_keys').columns(['user_id', 'id']).execute();
  await sql`insert into api_keys (user_id, name, public_key, secret_hash, scopes, created_at, updated_at)
            select id, 'Default', public_key, secret_hash, 'full', created_at, updated_at from accounts order by id`.execute(db);
  await sql`update accounts set secret_hash = ''`.execute(db);
  if (engine === 'postgres') {
    await sql`create trigger api_keys_notify_change after insert or delete or truncate on api_keys for each statement execute function accounts_notify_change()`.execute(
      db,
    );
    await sql`create trigger api_keys_notify_update after update of user_id, name, public_key, secret_hash, scopes on api_keys for each statement execute function accounts_notify_change()`.execute(
      db,
    );
  }

  await withId(engine, db.schema.createTable('audit_log'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'integer', (c) => c.notNull())
    .addColumn('actor_name', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target', 'text')
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_log_user').on('audit_log').columns(['user_id', 'id']).execute();
  await db.schema.createIndex('audit_log_created').on('audit_log').column('created_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('audit_log').execute();
  await sql`update accounts set secret_hash = coalesce((select k.secret_hash from api_keys k where k.user_id = accounts.id and k.public_key = accounts.public_key), '')`.execute(
    db,
  );
  await db.schema.dropTable('api_keys').execute();
}
