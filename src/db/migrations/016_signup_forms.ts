import type { Kysely } from 'kysely';
import { engineOf, withId } from '../dialect.js';

/**
 * Sign-up forms with double opt-in (docs/forms.md).
 *
 * - `signup_forms`: an account's forms: the contact type sign-ups join, the fields asked for (JSON
 *   array of field names; `email` always), an optional unsubscribe group, the verified sender of the
 *   confirmation mail, where people go after confirming, and the mail's own subject and text.
 * - `signup_pending`: a sign-up waiting for its confirmation: the address and values as posted, the
 *   IP and user agent of the post, the subject and text of the confirmation mail as sent, and the
 *   hash of the link's token (the token itself is only in the mail). Deleted when confirmed, with
 *   its form, or some time after it expired. The rate limits count these rows.
 * - `contact_consents`: the proof of each confirmed sign-up, kept with the contact (and deleted
 *   with it): the form, both times and IPs, the user agent, and the confirmation mail as sent.
 *   `form_id` is no reference: the proof outlives the form.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const engine = engineOf(db);
  await withId(engine, db.schema.createTable('signup_forms'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('contact_type_id', 'integer', (c) => c.notNull())
    .addColumn('fields', 'text', (c) => c.notNull())
    .addColumn('unsubscribe_group_id', 'integer')
    .addColumn('sender_id', 'integer', (c) => c.notNull())
    .addColumn('redirect_url', 'text')
    .addColumn('confirmation_subject', 'text')
    .addColumn('confirmation_text', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('signup_forms_user').on('signup_forms').columns(['user_id', 'id']).execute();

  await withId(engine, db.schema.createTable('signup_pending'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('form_id', 'integer', (c) => c.notNull().references('signup_forms.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('email_key', 'text', (c) => c.notNull())
    .addColumn('field_values', 'text', (c) => c.notNull())
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('user_agent', 'text')
    .addColumn('mail_subject', 'text', (c) => c.notNull())
    .addColumn('mail_text', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('signup_pending_form_email').on('signup_pending').columns(['form_id', 'email_key', 'created_at']).execute();
  await db.schema.createIndex('signup_pending_form_ip').on('signup_pending').columns(['form_id', 'ip', 'created_at']).execute();
  await db.schema.createIndex('signup_pending_address').on('signup_pending').columns(['user_id', 'email_key', 'created_at']).execute();
  await db.schema.createIndex('signup_pending_expiry').on('signup_pending').column('expires_at').execute();

  await withId(engine, db.schema.createTable('contact_consents'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('contact_id', 'integer', (c) => c.notNull().references('contacts.id').onDelete('cascade'))
    .addColumn('email_key', 'text', (c) => c.notNull())
    .addColumn('form_id', 'integer', (c) => c.notNull())
    .addColumn('form_name', 'text', (c) => c.notNull())
    .addColumn('signed_up_at', 'text', (c) => c.notNull())
    .addColumn('signup_ip', 'text', (c) => c.notNull())
    .addColumn('signup_user_agent', 'text')
    .addColumn('confirmed_at', 'text', (c) => c.notNull())
    .addColumn('confirm_ip', 'text', (c) => c.notNull())
    .addColumn('confirm_user_agent', 'text')
    .addColumn('mail_subject', 'text', (c) => c.notNull())
    .addColumn('mail_text', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('contact_consents_address').on('contact_consents').columns(['user_id', 'email_key']).execute();
  await db.schema.createIndex('contact_consents_contact').on('contact_consents').column('contact_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('contact_consents').execute();
  await db.schema.dropTable('signup_pending').execute();
  await db.schema.dropTable('signup_forms').execute();
}
