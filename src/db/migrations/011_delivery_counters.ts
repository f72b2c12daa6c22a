import type { Kysely } from 'kysely';

/**
 * The counters and message columns of what happens after the SMTP accept (bounces and complaints
 * that come back later, clicks), shared by the relay, bounce and click features.
 *
 * - Single sends and automations count hard and soft bounces apart (`bounces` stays their sum),
 *   spam complaints, and unique and total clicks; `track_clicks` (1 by default) says whether a
 *   send's or automation email's links are rewritten for click tracking.
 * - A message records how it bounced (`bounce_type`: `hard` or `soft`, null while it has not),
 *   whether its recipient complained (`complained` 0/1), its clicks and first click, and the relay
 *   it went through (`relay`, the relay's name; null for the outbox or a single SMTP server).
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const column of ['hard_bounces', 'soft_bounces', 'spam_reports', 'unique_clicks', 'total_clicks']) {
    await db.schema
      .alterTable('single_sends')
      .addColumn(column, 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  }
  await db.schema
    .alterTable('single_sends')
    .addColumn('track_clicks', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  for (const column of ['total_hard_bounces', 'total_soft_bounces', 'total_spam_reports', 'total_unique_clicks', 'total_clicks']) {
    await db.schema
      .alterTable('automations')
      .addColumn(column, 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  }
  await db.schema
    .alterTable('automation_schedules')
    .addColumn('track_clicks', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema.alterTable('mail_messages').addColumn('bounce_type', 'text').execute();
  await db.schema
    .alterTable('mail_messages')
    .addColumn('complained', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('mail_messages')
    .addColumn('clicks', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('mail_messages').addColumn('first_clicked_at', 'text').execute();
  await db.schema.alterTable('mail_messages').addColumn('relay', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ['relay', 'first_clicked_at', 'clicks', 'complained', 'bounce_type'])
    await db.schema.alterTable('mail_messages').dropColumn(column).execute();
  await db.schema.alterTable('automation_schedules').dropColumn('track_clicks').execute();
  for (const column of ['total_hard_bounces', 'total_soft_bounces', 'total_spam_reports', 'total_unique_clicks', 'total_clicks'])
    await db.schema.alterTable('automations').dropColumn(column).execute();
  for (const column of ['hard_bounces', 'soft_bounces', 'spam_reports', 'unique_clicks', 'total_clicks', 'track_clicks'])
    await db.schema.alterTable('single_sends').dropColumn(column).execute();
}
