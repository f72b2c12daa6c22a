import { sql, type Kysely } from 'kysely';

/**
 * Engagement in segments and the sunset policy (docs/segments.md, docs/sunset.md).
 *
 * - `account_settings`: one row per account that saved its settings (an account without one has
 *   the defaults): the sunset policy (`sunset_enabled`, `sunset_days`, `sunset_min_messages`) and
 *   when its inactive addresses were last brought up to date (`sunset_swept_at`).
 * - `segments.refreshed_at`: when the membership of a segment whose conditions depend on time or
 *   engagement was last recomputed (such segments are recomputed when read, and at least hourly
 *   while an automation targets them).
 * - `mail_messages.sunset_lifted`: 1 on the messages an address had received when its suppression
 *   was lifted; the sunset policy counts only the messages received after that.
 * - `mail_messages_user_email`: an account's messages to one address, which both engagement
 *   conditions (one probe per contact) and the sunset policy (grouped by address) read.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('account_settings')
    .addColumn('user_id', 'integer', (c) => c.primaryKey().references('accounts.id').onDelete('cascade'))
    .addColumn('sunset_enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('sunset_days', 'integer', (c) => c.notNull().defaultTo(180))
    .addColumn('sunset_min_messages', 'integer', (c) => c.notNull().defaultTo(5))
    .addColumn('sunset_swept_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('segments').addColumn('refreshed_at', 'text').execute();
  await db.schema
    .alterTable('mail_messages')
    .addColumn('sunset_lifted', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('mail_messages_user_email').on('mail_messages').columns(['user_id', 'email_key']).execute();
  // The sweep finds an account's inactive entries among its suppressions.
  await sql`create index suppressions_inactive on suppressions (user_id) where reason = 'inactive'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('suppressions_inactive').execute();
  await db.schema.dropIndex('mail_messages_user_email').execute();
  await db.schema.alterTable('mail_messages').dropColumn('sunset_lifted').execute();
  await db.schema.alterTable('segments').dropColumn('refreshed_at').execute();
  await db.schema.dropTable('account_settings').execute();
}
