import type { Kysely } from 'kysely';
import { engineOf, withId } from '../dialect.js';

/**
 * Machines' opens and scanners' clicks, counted apart (docs/engagement.md).
 *
 * - Single sends and automations count their machine opens (`machine_opens`; automations:
 *   `total_machine_opens`), the recipients a person opened (`unique_human_opens`;
 *   `total_unique_human_opens`) and their scanner clicks (`bot_clicks`; `total_bot_clicks`).
 * - A message keeps when a person last opened its image (`human_pixel_opened_at`): a person's
 *   open is that or a person's click, so when a click turns out to be a scanner's the message's
 *   `last_human_opened_at` can be put back.
 * - `message_clicks`: every click of a message (not HEAD requests), with when it came, on which
 *   link (`link_id` 0: the message's trap link), whether it is a scanner's (`bot`), and whether it
 *   counted the message's open (`opened`: the first open of a message clicked before any open).
 *   The rules that find scanners look at a message's clicks around each new one; the click a
 *   person made before a scanner's burst is read back from here.
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const column of ['machine_opens', 'unique_human_opens', 'bot_clicks']) {
    await db.schema
      .alterTable('single_sends')
      .addColumn(column, 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  }
  for (const column of ['total_machine_opens', 'total_unique_human_opens', 'total_bot_clicks']) {
    await db.schema
      .alterTable('automations')
      .addColumn(column, 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  }
  await db.schema.alterTable('mail_messages').addColumn('human_pixel_opened_at', 'text').execute();
  await withId(engineOf(db), db.schema.createTable('message_clicks'))
    .addColumn('message_id', 'integer', (c) => c.notNull().references('mail_messages.id').onDelete('cascade'))
    .addColumn('link_id', 'integer', (c) => c.notNull())
    .addColumn('clicked_at', 'text', (c) => c.notNull())
    .addColumn('bot', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('opened', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('message_clicks_message_time').on('message_clicks').columns(['message_id', 'clicked_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('message_clicks').execute();
  await db.schema.alterTable('mail_messages').dropColumn('human_pixel_opened_at').execute();
  for (const column of ['total_machine_opens', 'total_unique_human_opens', 'total_bot_clicks'])
    await db.schema.alterTable('automations').dropColumn(column).execute();
  for (const column of ['machine_opens', 'unique_human_opens', 'bot_clicks'])
    await db.schema.alterTable('single_sends').dropColumn(column).execute();
}
