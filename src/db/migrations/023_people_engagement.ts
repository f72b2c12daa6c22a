import type { Kysely } from 'kysely';

/**
 * People's engagement, apart from machines' (docs/engagement.md): each message keeps how many of
 * its opens were machine opens (an image proxy that fetches on delivery, a prefetching agent) and
 * how many of its clicks were a scanner's (a security gateway), and when a person last opened it
 * and last clicked it. Segments' engagement conditions and the sunset policy read the last two;
 * a message no person opened or clicked has them null. Times are stored as every time here
 * (ISO 8601, microseconds, UTC).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('mail_messages')
    .addColumn('machine_opens', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('mail_messages')
    .addColumn('bot_clicks', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('mail_messages').addColumn('last_human_opened_at', 'text').execute();
  await db.schema.alterTable('mail_messages').addColumn('last_human_clicked_at', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ['last_human_clicked_at', 'last_human_opened_at', 'bot_clicks', 'machine_opens']) {
    await db.schema.alterTable('mail_messages').dropColumn(column).execute();
  }
}
