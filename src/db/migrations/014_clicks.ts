import type { Kysely } from 'kysely';
import { engineOf, withId } from '../dialect.js';

/**
 * Click tracking and the hourly statistics.
 *
 * - `tracked_links`: the links of one campaign's design (a single send, or one automation email:
 *   `campaign_table`/`campaign_id`) rewritten for click tracking, one row per distinct URL in order
 *   of first appearance (`position`), with the URL as the design has it (entities decoded,
 *   `((placeholders))` kept). `source_table`/`source_id` name where the campaign's statistics are
 *   counted (the kind's source: the single send, or the automation), so the statistics of an
 *   automation gather the links of all its emails. Each link counts its clicks and unique clicks.
 * - `link_clicks`: one row per message and link that was clicked, the first time: what makes a
 *   link's unique click unique.
 * - `engagement_hours`: per source and UTC hour (`YYYY-MM-DD HH:00:00`), the messages delivered,
 *   opens and clicks of that hour (the statistics' timeline).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const engine = engineOf(db);
  await withId(engine, db.schema.createTable('tracked_links'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('source_table', 'text', (c) => c.notNull())
    .addColumn('source_id', 'integer', (c) => c.notNull())
    .addColumn('campaign_table', 'text', (c) => c.notNull())
    .addColumn('campaign_id', 'integer', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('unique_clicks', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('total_clicks', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('tracked_links_campaign_position', ['campaign_table', 'campaign_id', 'position'])
    .execute();
  await db.schema.createIndex('tracked_links_source').on('tracked_links').columns(['source_table', 'source_id']).execute();

  await db.schema
    .createTable('link_clicks')
    .addColumn('message_id', 'integer', (c) => c.notNull().references('mail_messages.id').onDelete('cascade'))
    .addColumn('link_id', 'integer', (c) => c.notNull().references('tracked_links.id').onDelete('cascade'))
    .addColumn('first_clicked_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('link_clicks_pk', ['message_id', 'link_id'])
    .execute();
  await db.schema.createIndex('link_clicks_link').on('link_clicks').column('link_id').execute();

  await db.schema
    .createTable('engagement_hours')
    .addColumn('source_table', 'text', (c) => c.notNull())
    .addColumn('source_id', 'integer', (c) => c.notNull())
    .addColumn('hour', 'text', (c) => c.notNull())
    .addColumn('delivered', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('opens', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('clicks', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('engagement_hours_pk', ['source_table', 'source_id', 'hour'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('engagement_hours').execute();
  await db.schema.dropTable('link_clicks').execute();
  await db.schema.dropTable('tracked_links').execute();
}
