import { sql, type Kysely } from 'kysely';
import { engineOf, withId } from '../dialect.js';

/**
 * Single sends and the durable mail queue.
 *
 * `mail_messages` is the queue of every outgoing message of the service (single sends, automation
 * emails, sender verification and notification mails): one row per message, written in the same
 * transaction as the change that causes it. A row is due when `state` is `queued` or `sending`
 * and `next_attempt_at` has passed: a worker claims it by setting `sending` and pushing
 * `next_attempt_at` to the end of its lease, so a lease that runs out (the worker died) makes the
 * row due again with no separate sweep. Timestamps are UTC text (`YYYY-MM-DDTHH:MM:SS.ffffffZ`),
 * which compares correctly as text on both engines.
 *
 * `bounced_addresses` holds the addresses of an account that got a permanent failure: they are
 * never mailed again by that account.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const engine = engineOf(db);

  await withId(engine, db.schema.createTable('single_sends'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('utr', 'text', (c) => c.notNull().unique())
    .addColumn('template_id', 'integer', (c) => c.notNull())
    .addColumn('template_json', 'text')
    .addColumn('template_html', 'text')
    .addColumn('recipient_id', 'text', (c) => c.notNull())
    .addColumn('exclude_specific_recipient_id', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('sender_id', 'integer', (c) => c.notNull())
    .addColumn('unsubscribe_group_id', 'integer', (c) => c.notNull())
    .addColumn('single_send_name', 'text', (c) => c.notNull())
    .addColumn('from_sender', 'text', (c) => c.notNull())
    .addColumn('reply_to', 'text', (c) => c.notNull())
    .addColumn('sender_name', 'text')
    .addColumn('sender_address', 'text')
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('preheader', 'text', (c) => c.notNull())
    .addColumn('schedule_type', 'integer', (c) => c.notNull())
    .addColumn('schedule_date', 'text', (c) => c.notNull())
    .addColumn('schedule_time', 'text', (c) => c.notNull())
    .addColumn('timezone', 'text')
    // When the send may start (UTC); null while it is a draft (status 0).
    .addColumn('due_at', 'text')
    .addColumn('status', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('triggered', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('delivered', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('unique_opens', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('total_opens', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('bounces', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('unsubscribes', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('sent_at', 'text')
    .addColumn('deleted_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('single_sends_user_live')
    .on('single_sends')
    .columns(['user_id', 'id'])
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();
  // The scheduler's question: which ready sends are due?
  await db.schema.createIndex('single_sends_due').on('single_sends').columns(['status', 'due_at']).execute();

  const table = db.schema.createTable('mail_messages');
  await (engine === 'postgres' ? table.addColumn('id', 'bigserial', (c) => c.primaryKey()) : withId(engine, table))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('single_send_id', 'integer', (c) => c.references('single_sends.id').onDelete('cascade'))
    .addColumn('automation_id', 'integer')
    .addColumn('contact_id', 'integer')
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('email_key', 'text', (c) => c.notNull())
    .addColumn('payload', 'text')
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('queued'))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('last_error', 'text')
    .addColumn('message_id', 'text')
    .addColumn('sent_at', 'text')
    .addColumn('opens', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('first_opened_at', 'text')
    .addColumn('unsubscribed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // Each address once per send, enforced by the database (case-insensitive: email_key).
  await db.schema
    .createIndex('mail_messages_send_email')
    .on('mail_messages')
    .columns(['single_send_id', 'email_key'])
    .unique()
    .where(sql.ref('single_send_id'), 'is not', null)
    .execute();
  // The claim reads only unfinished rows, oldest due first.
  await sql`create index mail_messages_due on mail_messages (next_attempt_at, id) where state in ('queued', 'sending')`.execute(db);
  await db.schema.createIndex('mail_messages_send_state').on('mail_messages').columns(['single_send_id', 'state']).execute();

  await db.schema
    .createTable('bounced_addresses')
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('email_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('bounced_addresses_pk', ['user_id', 'email_key'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['bounced_addresses', 'mail_messages', 'single_sends']) await db.schema.dropTable(t).execute();
}
