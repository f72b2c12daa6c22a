import { sql, type Kysely } from 'kysely';
import { engineOf, withId } from '../dialect.js';

/**
 * Automations: timed email sequences run for every contact who joins a contact type or segment.
 *
 * - `automations`: the sequence's target (`automation_for_table` + `automation_for`), its kind
 *   (1 welcome, 2 custom), status (0 draft or paused, 1 live), `live_at` (when it first went
 *   live: a welcome automation enrols those who join after it) and its statistics.
 * - `automation_schedules`: its emails, run in id order (creation order). The sender's columns
 *   are copied in when the email is added, as a single send copies them.
 * - `automation_enrollments`: one row per (automation, address), ever. `next_schedule_id` is the
 *   email it waits for (null: it has had every email so far) and `due_at` when that one is due
 *   (`step_base_at`, the time of its previous step, plus the email's wait). A worker turns a due
 *   row into a mail queue row and moves it on, in one transaction.
 *
 * `mail_messages.automation_schedule_id` names the email a queued message is; each address gets
 * each email at most once (a unique index). A paused automation's queued messages wait in the
 * state `held`, which no worker claims.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const engine = engineOf(db);

  await withId(engine, db.schema.createTable('automations'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('utr', 'text', (c) => c.notNull().unique())
    .addColumn('automation_name', 'text', (c) => c.notNull())
    .addColumn('automation_type', 'integer', (c) => c.notNull())
    .addColumn('automation_for', 'integer', (c) => c.notNull())
    .addColumn('automation_for_table', 'text', (c) => c.notNull())
    .addColumn('exit_criteria', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('unsubscribe_group_id', 'integer')
    .addColumn('status', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('live_at', 'text')
    .addColumn('total_triggered', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('total_delivered', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('total_unique_opens', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('total_opens', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('total_bounces', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('total_unsubscribe', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('deleted_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('automations_user_live')
    .on('automations')
    .columns(['user_id', 'id'])
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();
  // The worker's question each tick: which automations are live?
  await db.schema.createIndex('automations_status').on('automations').columns(['status', 'id']).execute();

  await withId(engine, db.schema.createTable('automation_schedules'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('automation_id', 'integer', (c) => c.notNull().references('automations.id').onDelete('cascade'))
    .addColumn('utr', 'text', (c) => c.notNull().unique())
    .addColumn('sender_id', 'integer', (c) => c.notNull())
    .addColumn('from_sender', 'text', (c) => c.notNull())
    .addColumn('reply_to', 'text', (c) => c.notNull())
    .addColumn('sender_name', 'text')
    .addColumn('sender_address', 'text')
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('waiting_period', 'integer', (c) => c.notNull())
    .addColumn('waiting_type', 'text', (c) => c.notNull())
    .addColumn('template_id', 'integer', (c) => c.notNull())
    .addColumn('preview_img', 'text', (c) => c.notNull())
    .addColumn('template_json', 'text')
    .addColumn('template_html', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('automation_schedules_automation').on('automation_schedules').columns(['automation_id', 'id']).execute();

  await withId(engine, db.schema.createTable('automation_enrollments'))
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('automation_id', 'integer', (c) => c.notNull().references('automations.id').onDelete('cascade'))
    .addColumn('contact_id', 'integer')
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('email_key', 'text', (c) => c.notNull())
    .addColumn('payload', 'text')
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('active'))
    .addColumn('exit_reason', 'text')
    .addColumn('last_schedule_id', 'integer')
    .addColumn('next_schedule_id', 'integer')
    .addColumn('step_base_at', 'text', (c) => c.notNull())
    .addColumn('due_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // One enrollment per (automation, address), ever.
  await db.schema
    .createIndex('automation_enrollments_address')
    .on('automation_enrollments')
    .columns(['automation_id', 'email_key'])
    .unique()
    .execute();
  // The due steps of one automation, oldest first.
  await sql`create index automation_enrollments_due on automation_enrollments (automation_id, due_at, id) where state = 'active' and due_at is not null`.execute(
    db,
  );
  // Enrollments waiting at the end of the sequence, picked up when an email is added.
  await sql`create index automation_enrollments_next on automation_enrollments (automation_id, next_schedule_id) where state = 'active'`.execute(
    db,
  );

  await db.schema.alterTable('mail_messages').addColumn('automation_schedule_id', 'integer').execute();
  // Each address gets each automation email at most once.
  await db.schema
    .createIndex('mail_messages_schedule_email')
    .on('mail_messages')
    .columns(['automation_schedule_id', 'email_key'])
    .unique()
    .where(sql.ref('automation_schedule_id'), 'is not', null)
    .execute();
  // Pause, resume and delete find an automation's unfinished messages.
  await db.schema.createIndex('mail_messages_automation_state').on('mail_messages').columns(['automation_id', 'state']).execute();
  // The held messages (of paused automations), for resume and the queue depth.
  await sql`create index mail_messages_held on mail_messages (automation_id) where state = 'held'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('mail_messages_held').execute();
  await db.schema.dropIndex('mail_messages_automation_state').execute();
  await db.schema.dropIndex('mail_messages_schedule_email').execute();
  await db.schema.alterTable('mail_messages').dropColumn('automation_schedule_id').execute();
  for (const t of ['automation_enrollments', 'automation_schedules', 'automations']) await db.schema.dropTable(t).execute();
}
