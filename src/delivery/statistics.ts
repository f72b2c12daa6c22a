/**
 * The detailed statistics of a single send or an automation (`GET /single-send/stats`,
 * `GET /automations/stats`): its counters, its tracked links with their clicks, and its timeline
 * per UTC hour. The counters come from the source row (the same the details show, so both
 * agree); links and hours from the tables the engagement events fill (migration 014).
 */
import { Type, type Static } from '@sinclair/typebox';
import type { Db } from '../db/index.js';
import { Success } from '../http/schemas.js';

const Count = (description: string) => Type.Integer({ minimum: 0, description });

/** The shape of `message.stats`. */
export const StatsShape = Type.Object(
  {
    triggered: Count('Messages handed to delivery.'),
    delivered: Count('Messages the receiving server accepted.'),
    hard_bounces: Count('Messages that bounced for good (the address does not exist).'),
    soft_bounces: Count('Messages that bounced for any other reason.'),
    unique_opens: Count('Recipients who opened (a click counts an open for one who had none).'),
    total_opens: Count('Opens, every one.'),
    unique_clicks: Count("Recipients who clicked a tracked link (people only: scanners' clicks are in `bot_clicks`)."),
    total_clicks: Count("Clicks on tracked links, every one but scanners'."),
    unsubscribes: Count('Recipients who unsubscribed through a message.'),
    spam_reports: Count('Recipients who reported a message as spam.'),
    unique_human_opens: Count(
      "Recipients with at least one open that is not a machine's (a person's click counts as one); see docs/engagement.md.",
    ),
    machine_opens: Count(
      "Opens by machines (Apple Mail Privacy Protection's proxy, prefetching agents, the configured address ranges); they count in the opens too.",
    ),
    bot_clicks: Count('Clicks by scanners (security gateways, link checkers); they count in no other click figure.'),
    links: Type.Array(
      Type.Object({
        url: Type.String({ description: 'The link as the design has it (placeholders not filled).' }),
        unique_clicks: Count('Recipients who clicked it (people only).'),
        total_clicks: Count("Its clicks, every one but scanners'."),
      }),
      {
        description:
          'Every tracked link, clicked or not, in order of first appearance (an automation: its emails in order, one entry per URL).',
      },
    ),
    timeline: Type.Array(
      Type.Object({
        hour: Type.String({ description: 'The UTC hour: `YYYY-MM-DD HH:00:00`.' }),
        delivered: Count('Messages delivered in that hour.'),
        opens: Count('Opens in that hour (total, not unique).'),
        clicks: Count("Clicks in that hour (total, not unique; not scanners')."),
      }),
      { description: 'One entry per UTC hour that had any of these events, oldest first.' },
    ),
  },
  { description: 'Detailed statistics.' },
);
export type Stats = Static<typeof StatsShape>;

export const StatsAnswer = Success(Type.Object({ stats: StatsShape }));

/** The counters of a source, named as the statistics name them. */
export type StatsCounters = Omit<Stats, 'links' | 'timeline'>;

/**
 * The counters of a source row, read through the column of each counter that its kind declares
 * (`MailSource.counters`: `delivered` is `total_delivered` on automations); `triggered` as given.
 */
export function countersOf(
  row: Record<string, unknown>,
  columns: Readonly<Record<Exclude<keyof StatsCounters, 'triggered'>, string>>,
  triggered: number,
): StatsCounters {
  const read = (counter: keyof typeof columns) => Number(row[columns[counter]]);
  return {
    triggered,
    delivered: read('delivered'),
    hard_bounces: read('hard_bounces'),
    soft_bounces: read('soft_bounces'),
    unique_opens: read('unique_opens'),
    total_opens: read('total_opens'),
    unique_clicks: read('unique_clicks'),
    total_clicks: read('total_clicks'),
    unsubscribes: read('unsubscribes'),
    spam_reports: read('spam_reports'),
    unique_human_opens: read('unique_human_opens'),
    machine_opens: read('machine_opens'),
    bot_clicks: read('bot_clicks'),
  };
}

/** A source of statistics: the kind's source table and row (`single_sends`/`automations`). */
export interface StatsSource {
  table: string;
  id: number;
}

/**
 * The statistics of a source: `counters` as read from its row, its links (merged by URL across the
 * emails of an automation, in the order the emails run, then of appearance) and its hours. Two queries.
 */
export async function statisticsOf(db: Db, source: StatsSource, counters: StatsCounters): Promise<Stats> {
  const [links, hours] = await Promise.all([
    db
      .selectFrom('tracked_links')
      .select(['url', 'unique_clicks', 'total_clicks'])
      .where('source_table', '=', source.table)
      .where('source_id', '=', source.id)
      .orderBy('campaign_id')
      .orderBy('position')
      .execute(),
    db
      .selectFrom('engagement_hours')
      .select(['hour', 'delivered', 'opens', 'clicks'])
      .where('source_table', '=', source.table)
      .where('source_id', '=', source.id)
      .orderBy('hour')
      .execute(),
  ]);
  const byUrl = new Map<string, { url: string; unique_clicks: number; total_clicks: number }>();
  for (const l of links) {
    const entry = byUrl.get(l.url) ?? { url: l.url, unique_clicks: 0, total_clicks: 0 };
    entry.unique_clicks += Number(l.unique_clicks);
    entry.total_clicks += Number(l.total_clicks);
    byUrl.set(l.url, entry);
  }
  const timeline = hours
    .map((h) => ({ hour: h.hour, delivered: Number(h.delivered), opens: Number(h.opens), clicks: Number(h.clicks) }))
    .filter((h) => h.delivered > 0 || h.opens > 0 || h.clicks > 0);
  return { ...counters, links: [...byUrl.values()], timeline };
}
