import type { Kysely } from 'kysely';
import { engineOf, withId } from '../dialect.js';

/**
 * A/B tests of single sends (docs/ab-tests.md).
 *
 * - `single_sends`: `ab_test` (0/1), the share of recipients in the test (`ab_test_percent`), the
 *   metric that decides (`ab_winner_metric`: `opens` or `clicks`), the wait (`ab_wait_minutes`),
 *   when the wait ends (`ab_wait_ends_at`: set once the test share has been handed to the SMTP
 *   server), and the winner (`ab_winner`, the variant's index) with when it was chosen
 *   (`ab_winner_at`). The winner is written once, by a conditional update.
 * - `single_send_variants`: variants 1 to 4 of a send (variant 0 is the send's own subject and
 *   design): a subject, and a design of its own or none (then the send's). Its tracked links are
 *   its own campaign's (`campaign_table` `single_send_variants`), so it carries the sender's name
 *   and postal address as the send does, for the placeholders of its links.
 * - `mail_messages.ab_variant`: the variant a message of the test share carries; null for the
 *   messages of the winner's send (they carry the send's `ab_winner`) and of sends without a test.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('single_sends')
    .addColumn('ab_test', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  for (const [column, type] of [
    ['ab_test_percent', 'integer'],
    ['ab_winner_metric', 'text'],
    ['ab_wait_minutes', 'integer'],
    ['ab_wait_ends_at', 'text'],
    ['ab_winner', 'integer'],
    ['ab_winner_at', 'text'],
  ] as const) {
    await db.schema.alterTable('single_sends').addColumn(column, type).execute();
  }

  await withId(engineOf(db), db.schema.createTable('single_send_variants'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('single_send_id', 'integer', (c) => c.notNull().references('single_sends.id').onDelete('cascade'))
    .addColumn('variant', 'integer', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('template_id', 'integer')
    .addColumn('template_json', 'text')
    .addColumn('template_html', 'text')
    .addColumn('design_id', 'integer')
    .addColumn('sender_name', 'text')
    .addColumn('sender_address', 'text')
    .addUniqueConstraint('single_send_variants_send_variant', ['single_send_id', 'variant'])
    .execute();

  await db.schema.alterTable('mail_messages').addColumn('ab_variant', 'integer').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('mail_messages').dropColumn('ab_variant').execute();
  await db.schema.dropTable('single_send_variants').execute();
  for (const column of [
    'ab_test',
    'ab_test_percent',
    'ab_winner_metric',
    'ab_wait_minutes',
    'ab_wait_ends_at',
    'ab_winner',
    'ab_winner_at',
  ])
    await db.schema.alterTable('single_sends').dropColumn(column).execute();
}
