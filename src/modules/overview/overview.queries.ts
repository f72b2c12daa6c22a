import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import { toCount } from '../../db/dialect.js';

/**
 * The figures of the account's campaign mail (single sends and automation emails, not the
 * service's own mails nor test sends) queued since `since`: a range of the index
 * `mail_messages_user_created` (migration 018).
 */
export async function messageFigures(db: Db, userId: number, since: string) {
  const row = await db
    .selectFrom('mail_messages')
    .where('user_id', '=', userId)
    .where('created_at', '>=', since)
    .where((eb) => eb.or([eb('single_send_id', 'is not', null), eb('automation_id', 'is not', null)]))
    .select([
      sql<number>`count(*)`.as('sent'),
      sql<number>`count(distinct single_send_id)`.as('single_sends'),
      sql<number>`sum(case when state = 'sent' and bounce_type is null then 1 else 0 end)`.as('delivered'),
      sql<number>`sum(case when opens > 0 then 1 else 0 end)`.as('unique_opens'),
      sql<number>`sum(case when clicks > 0 then 1 else 0 end)`.as('unique_clicks'),
      sql<number>`sum(case when last_human_opened_at is not null then 1 else 0 end)`.as('unique_human_opens'),
      sql<number>`sum(machine_opens)`.as('machine_opens'),
      sql<number>`sum(bot_clicks)`.as('bot_clicks'),
      sql<number>`sum(case when bounce_type is not null then 1 else 0 end)`.as('bounces'),
      sql<number>`sum(complained)`.as('complaints'),
      sql<number>`sum(unsubscribed)`.as('unsubscribes'),
    ])
    .executeTakeFirstOrThrow();
  return {
    sent: toCount(row.sent),
    single_sends: toCount(row.single_sends),
    delivered: toCount(row.delivered),
    unique_opens: toCount(row.unique_opens),
    unique_clicks: toCount(row.unique_clicks),
    unique_human_opens: toCount(row.unique_human_opens),
    machine_opens: toCount(row.machine_opens),
    bot_clicks: toCount(row.bot_clicks),
    bounces: toCount(row.bounces),
    complaints: toCount(row.complaints),
    unsubscribes: toCount(row.unsubscribes),
  };
}

/**
 * Delivered, opens and clicks per UTC day since the hour `sinceHour`, over the account's single
 * sends and automations, from the hourly table the engagement events fill (migration 014).
 */
export async function dailyEngagement(db: Db, userId: number, sinceHour: string) {
  const rows = await db
    .selectFrom('engagement_hours')
    .where('hour', '>=', sinceHour)
    .where((eb) =>
      eb.or([
        eb.and([
          eb('source_table', '=', 'single_sends'),
          eb('source_id', 'in', eb.selectFrom('single_sends').select('id').where('user_id', '=', userId)),
        ]),
        eb.and([
          eb('source_table', '=', 'automations'),
          eb('source_id', 'in', eb.selectFrom('automations').select('id').where('user_id', '=', userId)),
        ]),
      ]),
    )
    .select([
      sql<string>`substr(hour, 1, 10)`.as('day'),
      sql<number>`sum(delivered)`.as('delivered'),
      sql<number>`sum(opens)`.as('opens'),
      sql<number>`sum(clicks)`.as('clicks'),
    ])
    .groupBy(sql`substr(hour, 1, 10)`)
    .execute();
  return rows.map((r) => ({ day: r.day, delivered: toCount(r.delivered), opens: toCount(r.opens), clicks: toCount(r.clicks) }));
}

/** The account's running single sends, each with its messages and how many are done with (sent, bounced, suppressed…). */
export async function runningSends(db: Db, userId: number) {
  const rows = await db
    .selectFrom('single_sends as s')
    .leftJoin('mail_messages as m', 'm.single_send_id', 's.id')
    .where('s.user_id', '=', userId)
    .where('s.status', '=', 2)
    .where('s.deleted_at', 'is', null)
    .groupBy(['s.id', 's.utr', 's.single_send_name'])
    .orderBy('s.id')
    .select([
      's.utr',
      's.single_send_name',
      sql<number>`count(m.id)`.as('messages'),
      sql<number>`sum(case when m.state in ('queued', 'sending') then 0 when m.id is null then 0 else 1 end)`.as('done'),
    ])
    .execute();
  return rows.map((r) => ({ utr: r.utr, single_send_name: r.single_send_name, messages: toCount(r.messages), done: toCount(r.done) }));
}
