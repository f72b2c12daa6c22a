import { sql, type Kysely } from 'kysely';
import { engineOf, withId } from '../dialect.js';

/**
 * Bounces and complaints that arrive after the SMTP accept (docs/bounces.md).
 *
 * - `bounced_addresses` becomes the account's suppression list: each row gets an `id` (lists page
 *   by it), the address as reported (`email`), why it is there (`reason`: `hard_bounce`,
 *   `soft_bounces` or `complaint`) and the server's answer or report text (`detail`). The table is
 *   rebuilt to gain its id; rows already there were hard bounces at the SMTP answer. Every reader
 *   keeps reading (`user_id`, `email_key`): a row still means "never mail this address again".
 * - `soft_bounces` is the soft-bounce history of an address (3 within 30 days suppress it): one row
 *   per bounced message, or per reported bounce that names no message.
 * - `inbound_events` remembers the key of every event taken in, so the same report received twice
 *   counts once.
 * - `mail_messages.message_id` is indexed: a report names its message by our `Message-ID`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const engine = engineOf(db);
  await withId(engine, db.schema.createTable('bounced_addresses_next'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('email_key', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('detail', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('bounced_addresses_user_email', ['user_id', 'email_key'])
    .execute();
  await sql`
    insert into bounced_addresses_next (user_id, email_key, email, reason, detail, created_at)
    select user_id, email_key, email_key, 'hard_bounce', null, created_at from bounced_addresses
    order by created_at, user_id, email_key`.execute(db);
  await db.schema.dropTable('bounced_addresses').execute();
  await db.schema.alterTable('bounced_addresses_next').renameTo('bounced_addresses').execute();

  await withId(engine, db.schema.createTable('soft_bounces'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('email_key', 'text', (c) => c.notNull())
    .addColumn('mail_message_id', 'bigint')
    .addColumn('bounced_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('soft_bounces_address').on('soft_bounces').columns(['user_id', 'email_key', 'bounced_at']).execute();

  await db.schema
    .createTable('inbound_events')
    .addColumn('event_key', 'text', (c) => c.primaryKey())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema.createIndex('mail_messages_message_id').on('mail_messages').column('message_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('mail_messages_message_id').execute();
  await db.schema.dropTable('inbound_events').execute();
  await db.schema.dropTable('soft_bounces').execute();
  await db.schema
    .createTable('bounced_addresses_prev')
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('email_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('bounced_addresses_pk', ['user_id', 'email_key'])
    .execute();
  await sql`insert into bounced_addresses_prev (user_id, email_key, created_at)
    select user_id, email_key, created_at from bounced_addresses`.execute(db);
  await db.schema.dropTable('bounced_addresses').execute();
  await db.schema.alterTable('bounced_addresses_prev').renameTo('bounced_addresses').execute();
}
