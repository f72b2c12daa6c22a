import { sql, type Kysely } from 'kysely';
import { engineOf, withId } from '../dialect.js';

/**
 * People of an account, their sessions and one-time links (docs/security.md).
 *
 * - `people`: a person of one account (an address belongs to one person of one account), with a
 *   role; `password_hash` stays null until the invitation is accepted. Two-factor: the secret
 *   (sealed with the app secret) once enabled, one being set up, and the time step of the last
 *   code accepted (a code is accepted once).
 * - `sessions`: signed-in people; the cookie carries `<id>.<secret>` and only the secret's hash is
 *   kept. A session ends `expires_at` (7 days after sign-in) or 12 hours after `last_seen_at`.
 * - `access_tokens`: invitation and password reset links, likewise `<id>.<secret>` with the
 *   secret's hash; each used once, until `expires_at`.
 * - `sign_in_failures`: failed sign-ins by address (known or not), for the throttle.
 * - `recovery_codes`: a person's two-factor recovery codes, hashed, each used once.
 * - `account_settings.require_two_factor`: people without two-factor are kept out.
 * - PostgreSQL: changes to people, sessions and that setting notify the channel servers hear
 *   account changes on, so a removed person, a new role or an ended session counts at once on
 *   every server (a session's `last_seen_at` moving does not notify).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const engine = engineOf(db);
  await withId(engine, db.schema.createTable('people'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('email_key', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text')
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text')
    .addColumn('two_factor_secret', 'text')
    .addColumn('two_factor_pending', 'text')
    .addColumn('two_factor_step', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_sign_in_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('people_user').on('people').columns(['user_id', 'id']).execute();

  await withId(engine, db.schema.createTable('sessions'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('person_id', 'integer', (c) => c.notNull().references('people.id').onDelete('cascade'))
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_seen_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sessions_person').on('sessions').column('person_id').execute();

  await withId(engine, db.schema.createTable('access_tokens'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('person_id', 'integer', (c) => c.notNull().references('people.id').onDelete('cascade'))
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('access_tokens_person').on('access_tokens').columns(['person_id', 'purpose']).execute();

  await withId(engine, db.schema.createTable('sign_in_failures'))
    .addColumn('email_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sign_in_failures_email').on('sign_in_failures').columns(['email_key', 'created_at']).execute();
  await db.schema.createIndex('sign_in_failures_created').on('sign_in_failures').column('created_at').execute();

  await withId(engine, db.schema.createTable('recovery_codes'))
    .addColumn('person_id', 'integer', (c) => c.notNull().references('people.id').onDelete('cascade'))
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .execute();
  await db.schema.createIndex('recovery_codes_person').on('recovery_codes').column('person_id').execute();

  await db.schema
    .alterTable('account_settings')
    .addColumn('require_two_factor', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  if (engine === 'postgres') {
    for (const [table, columns] of [
      ['people', 'user_id, email_key, name, role, password_hash, two_factor_secret'],
      ['sessions', 'user_id, person_id, secret_hash, expires_at'],
      ['account_settings', 'require_two_factor'],
    ] as const) {
      await sql`create trigger ${sql.raw(`${table}_notify_change`)} after insert or delete or truncate on ${sql.table(table)} for each statement execute function accounts_notify_change()`.execute(
        db,
      );
      await sql`create trigger ${sql.raw(`${table}_notify_update`)} after update of ${sql.raw(columns)} on ${sql.table(table)} for each statement execute function accounts_notify_change()`.execute(
        db,
      );
    }
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (engineOf(db) === 'postgres') {
    await sql`drop trigger account_settings_notify_change on account_settings`.execute(db);
    await sql`drop trigger account_settings_notify_update on account_settings`.execute(db);
  }
  await db.schema.alterTable('account_settings').dropColumn('require_two_factor').execute();
  for (const table of ['recovery_codes', 'sign_in_failures', 'access_tokens', 'sessions', 'people'])
    await db.schema.dropTable(table).execute();
}
