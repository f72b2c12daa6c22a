import type { Kysely } from 'kysely';
import { engineOf, withId } from '../dialect.js';

/**
 * The sign-up forms' mail caps (docs/forms.md): `signup_log` has one row per sign-up that took a
 * confirmation mail (or would have, had the address not been unsubscribed or suppressed), and the
 * caps count its rows of the last hour or day, so every process sees the same counts. A row holds
 * no address: `address_hash` is a keyed hash of the address with any `+tag` removed, `domain` the
 * address's domain, `client` the client's IPv4 address or IPv6 /64 network. Rows older than a day
 * are deleted by later sign-ups; a form's rows go with it. The caps used to count pending sign-ups
 * by IP: that index of `signup_pending` goes.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(engineOf(db), db.schema.createTable('signup_log'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('form_id', 'integer', (c) => c.notNull().references('signup_forms.id').onDelete('cascade'))
    .addColumn('address_hash', 'text', (c) => c.notNull())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('client', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('signup_log_address').on('signup_log').columns(['user_id', 'address_hash', 'created_at']).execute();
  await db.schema.createIndex('signup_log_form').on('signup_log').columns(['form_id', 'created_at']).execute();
  await db.schema.createIndex('signup_log_form_domain').on('signup_log').columns(['form_id', 'domain', 'created_at']).execute();
  await db.schema.createIndex('signup_log_form_client').on('signup_log').columns(['form_id', 'client', 'created_at']).execute();
  await db.schema.createIndex('signup_log_created').on('signup_log').column('created_at').execute();
  await db.schema.dropIndex('signup_pending_form_ip').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('signup_pending_form_ip').on('signup_pending').columns(['form_id', 'ip', 'created_at']).execute();
  await db.schema.dropTable('signup_log').execute();
}
