/**
 * What happens to a message after it was queued, one function per event: delivered, bounced,
 * opened, clicked, unsubscribed through it, reported as spam. Each updates the message row and the statistics of what sent
 * it (the source its kind declares) in the caller's transaction, so an event and its counters
 * are stored together or not at all. Delivered, opens and clicks also add to the source's hour
 * in `engagement_hours` (the statistics' timeline). Delivered, bounced, opened, clicked and
 * complained also write their outgoing webhook event (`message.*`) in that transaction, for
 * messages of kinds with a source. Every producer of an event (the queue worker, the public
 * pages, bounce intake) goes through these doors, and only through them.
 */
import { sql } from 'kysely';
import type { Db } from '../db/index.js';
import { fillClickUrls } from '../delivery/click-links.js';
import type { ClickRef } from '../delivery/tracking.js';
import { emitEvents, type EventType, type OutgoingEvent } from '../events/outbox.js';
import { clickKey, findClickedLinks } from '../public/messages.queries.js';
import { isoMicros } from '../util/time.js';
import type { MailKinds, SourceCounter } from '../queue/queue.types.js';
import { recordSoftBounce, suppressAddress } from '../queue/bounced-addresses.js';
import {
  EVENT_COLUMNS,
  addToHours as addToHourRows,
  addToSources as addToSourceRows,
  hourOf,
  sourceKeyOf,
  sourceKeys,
  type CountedMessage,
  type EventMessage,
} from './sources.js';

export { EVENT_COLUMNS, hourOf, sourceKeys, type CountedMessage, type EventMessage };

/** The old door's shape of `addToSources` (the move keeps the doors as they were). */
function addToSources(trx: Db, kinds: MailKinds, items: Array<{ message: CountedMessage; delta: Partial<Record<SourceCounter, number>> }>) {
  return addToSourceRows(
    trx,
    kinds,
    items.map((i) => ({ message: i.message, counters: i.delta })),
  );
}

/** The old door's shape of `addToHours`: every item in the hour of `now`. */
function addToHours(
  trx: Db,
  kinds: MailKinds,
  items: Array<{ message: CountedMessage; delta: Partial<Record<'delivered' | 'opens' | 'clicks', number>> }>,
  now: Date,
) {
  return addToHourRows(
    trx,
    kinds,
    items.map((i) => ({ message: i.message, hour: hourOf(now), delta: i.delta })),
  );
}

/** The outgoing events about messages (each one names its message and what sent it). */
type MessageEventType = Extract<EventType, `message.${string}`>;

/**
 * Writes one `type` event per item into the outbox, in the door's transaction: one `emitEvents`
 * call for the batch. Its data: `source` (the kind's name), `utr` (of the source row, from
 * `utrs`), `email`, `contact_id`, `message_id`, and the item's `extra`. Messages of kinds without
 * a source (the service's own mail, test sends) have no event.
 */
async function emitMessageEvents(
  trx: Db,
  kinds: MailKinds,
  type: MessageEventType,
  items: ReadonlyArray<{ message: EventMessage; extra?: Record<string, unknown> }>,
  utrs: ReadonlyMap<string, string>,
  now: Date,
): Promise<void> {
  const events: OutgoingEvent[] = [];
  for (const { message, extra } of items) {
    const key = sourceKeyOf(kinds, message);
    if (key === null) continue;
    const data = {
      source: message.kind,
      utr: utrs.get(key) ?? null,
      email: message.email,
      contact_id: message.contact_id == null ? null : Number(message.contact_id),
      message_id: message.message_id ?? null,
      ...extra,
    };
    events.push({ userId: message.user_id, type, data, email: message.email });
  }
  await emitEvents(trx, now, events);
}

/**
 * Messages the SMTP server accepted at `now`: each counts once in `delivered` of what sent it,
 * and in the delivered of that hour, and has its `message.delivered` event.
 */
export async function recordDelivered(trx: Db, kinds: MailKinds, messages: EventMessage[], now: Date): Promise<void> {
  const items = messages.map((message) => ({ message, delta: { delivered: 1 } }));
  const utrs = await addToSources(trx, kinds, items);
  await addToHours(trx, kinds, items, now);
  await emitMessageEvents(trx, kinds, 'message.delivered', items, utrs, now);
}

/** A bounce of one message: how it bounced and the server's words (kept as the suppression's detail). */
export interface MessageBounce {
  id: number;
  type: 'hard' | 'soft';
  detail: string | null;
}

/**
 * Messages that bounced, each counted once, with the effects on their addresses. Each message's
 * `bounce_type` is set by a conditional update (`WHERE bounce_type IS NULL`), and only the rows it
 * changed count, so a second report of the same message counts nothing. `after` says when:
 *
 * - `attempt`: the queue's marks just settled the message as `bounced` at the SMTP answer (never
 *   delivered);
 * - `accept`: reported after the SMTP accept (a DSN, a relay's webhook): a `sent` message becomes
 *   `bounced` and leaves `delivered`.
 *
 * A counted message adds 1 to `bounces` and to `hard_bounces` or `soft_bounces` of what sent it.
 * Hard: its address is suppressed for its account at once; soft: the bounce joins the address's
 * soft-bounce history, and SOFT_THRESHOLD of them within 30 days suppress it. Each counted message
 * has its `message.bounced` event (`type` hard or soft). Returns the messages that counted.
 */
export async function recordBounced(
  trx: Db,
  kinds: MailKinds,
  bounces: readonly MessageBounce[],
  opts: { now: Date; after: 'attempt' | 'accept' },
): Promise<EventMessage[]> {
  const at = isoMicros(opts.now);
  const counted: Array<{ message: EventMessage; delta: Partial<Record<SourceCounter, number>>; extra: { type: 'hard' | 'soft' } }> = [];
  for (const b of bounces) {
    const message = await trx
      .updateTable('mail_messages')
      .set({ state: 'bounced', bounce_type: b.type, updated_at: at })
      .where('id', '=', b.id)
      .where('bounce_type', 'is', null)
      .where('state', '=', opts.after === 'accept' ? 'sent' : 'bounced')
      .returning([...EVENT_COLUMNS, 'sent_at', ...sourceKeys(kinds)])
      .executeTakeFirst();
    if (!message) continue;
    const delta: Partial<Record<SourceCounter, number>> = { bounces: 1, [`${b.type}_bounces`]: 1 };
    if (opts.after === 'accept') {
      delta.delivered = -1;
      // The timeline's delivered of the accept's hour agrees with the total: the message leaves it too.
      if (message.sent_at) await addToHours(trx, kinds, [{ message, delta: { delivered: -1 } }], new Date(message.sent_at));
    }
    counted.push({ message, delta, extra: { type: b.type } });
    if (b.type === 'hard') await suppressAddress(trx, message, 'hard_bounce', b.detail, opts.now);
    else await recordSoftBounce(trx, message, message.id, b.detail, opts.now);
  }
  const utrs = await addToSources(trx, kinds, counted);
  await emitMessageEvents(trx, kinds, 'message.bounced', counted, utrs, opts.now);
  return counted.map((c) => c.message);
}

/**
 * A spam complaint about a message: its `complained` flag goes 0 → 1 by a conditional update, and
 * only that change adds 1 to `spam_reports` of what sent it and puts its address on the account's
 * suppression list (reason `complaint`), and writes its `message.complained` event. A second
 * complaint about the same message counts nothing. (The caller also puts the address on the
 * account's global unsubscribe list, in the same transaction.) Returns the message when it
 * counted, else undefined.
 */
export async function recordComplaint(
  trx: Db,
  kinds: MailKinds,
  messageId: number,
  opts: { now: Date; detail: string | null },
): Promise<EventMessage | undefined> {
  const message = await trx
    .updateTable('mail_messages')
    .set({ complained: 1 })
    .where('id', '=', messageId)
    .where('complained', '=', 0)
    .returning([...EVENT_COLUMNS, ...sourceKeys(kinds)])
    .executeTakeFirst();
  if (!message) return undefined;
  const utrs = await addToSources(trx, kinds, [{ message, delta: { spam_reports: 1 } }]);
  await suppressAddress(trx, message, 'complaint', opts.detail, opts.now);
  await emitMessageEvents(trx, kinds, 'message.complained', [{ message }], utrs, opts.now);
  return message;
}

/** The most message ids one `recordOpens` call takes (well under both engines' parameter limits). */
export const MAX_OPENS_BATCH = 1000;

/**
 * Counts opens: each id once per hit (an id may repeat). In one transaction: each message's
 * `opens` grows by its hits and its `first_opened_at` is set if still empty; what sent it gains the
 * hits in `total_opens` and, for each message opened for the first time, 1 in `unique_opens`.
 * "First" is decided by a conditional update (`WHERE first_opened_at IS NULL`) and the rows it
 * changed, never by reading first, so concurrent first opens (in this process or another) count
 * one unique open. The hits also count in the opens of the hour of `now`, and each hit writes one
 * `message.opened` event (every counted open, not only the first). Ids of messages that no longer
 * exist count nothing. At most MAX_OPENS_BATCH ids.
 */
export async function recordOpens(db: Db, kinds: MailKinds, messageIds: readonly number[], now: Date): Promise<void> {
  const hits = new Map<number, number>();
  for (const id of messageIds) hits.set(id, (hits.get(id) ?? 0) + 1);
  if (hits.size === 0) return;
  // Ascending ids, so that concurrent batches lock rows in the same order.
  const ids = [...hits.keys()].sort((a, b) => a - b);
  const at = isoMicros(now);
  await db.transaction().execute(async (trx) => {
    const first = await trx
      .updateTable('mail_messages')
      .set({ first_opened_at: at })
      .where('id', 'in', ids)
      .where('first_opened_at', 'is', null)
      .returning('id')
      .execute();
    const firsts = new Set(first.map((r) => r.id));
    // One statement for the whole batch: the hits per id as a CASE (typed, so PostgreSQL can plan it).
    const added = sql<number>`case ${sql.ref('id')} ${sql.join(
      ids.map((id) => sql`when ${id} then cast(${hits.get(id)!} as integer)`),
      sql` `,
    )} else 0 end`;
    const rows = await trx
      .updateTable('mail_messages')
      .set((eb) => ({ opens: eb('opens', '+', added) }))
      .where('id', 'in', ids)
      .returning([...EVENT_COLUMNS, ...sourceKeys(kinds)])
      .execute();
    const utrs = await addToSources(
      trx,
      kinds,
      rows.map((message) => ({
        message,
        delta: { total_opens: hits.get(message.id)!, unique_opens: firsts.has(message.id) ? 1 : 0 },
      })),
    );
    await addToHours(
      trx,
      kinds,
      rows.map((message) => ({ message, delta: { opens: hits.get(message.id)! } })),
      now,
    );
    // One event per hit, in the order the hits came.
    const byId = new Map(rows.map((message) => [Number(message.id), message]));
    const opened = messageIds.flatMap((id) => (byId.has(id) ? [{ message: byId.get(id)! }] : []));
    await emitMessageEvents(trx, kinds, 'message.opened', opened, utrs, now);
  });
}

/** The most clicks one `recordClicks` call takes (well under both engines' parameter limits). */
export const MAX_CLICKS_BATCH = 500;

/** `case id when … then n … else 0 end` over the counts of `counts` (typed, so PostgreSQL can plan it). */
function caseOf(column: string, counts: ReadonlyMap<number, number>) {
  if (counts.size === 0) return sql<number>`0`;
  return sql<number>`case ${sql.ref(column)} ${sql.join(
    [...counts].map(([id, n]) => sql`when ${id} then cast(${n} as integer)`),
    sql` `,
  )} else 0 end`;
}

/**
 * Counts clicks: each click once per hit (a click may repeat), only those `findClickedLinks`
 * accepts. In one transaction: the first click of a message on a link adds a `link_clicks` row
 * and 1 to the link's `unique_clicks`; every hit adds 1 to the link's `total_clicks`, to the
 * message's `clicks`, to `total_clicks` of what sent it and to the clicks of the hour; a message's
 * first click (its `first_clicked_at` set) adds 1 to `unique_clicks` of what sent it. A message
 * clicked with no open counted yet counts an open too (a click proves it was opened: `opens`,
 * `first_opened_at`, the source's `total_opens` and `unique_opens`, the hour's opens). "First" is
 * decided by conditional writes (insert-or-nothing, `WHERE … IS NULL`) and the rows they changed,
 * never by reading first, so concurrent first clicks count once. Each hit writes one
 * `message.clicked` event whose `url` is where the click goes: the link's URL filled for the
 * message's recipient (`fillClickUrls`, with `unsubscribeUrl`), as the redirect sends it. At most
 * MAX_CLICKS_BATCH clicks. Returns the URL of each click counted, by `clickKey`.
 */
export async function recordClicks(
  db: Db,
  kinds: MailKinds,
  clicks: readonly ClickRef[],
  now: Date,
  unsubscribeUrl: (messageId: number) => string,
): Promise<Map<string, string>> {
  if (clicks.length === 0) return new Map();
  const at = isoMicros(now);
  return db.transaction().execute(async (trx) => {
    const found = await findClickedLinks(trx, kinds, clicks);
    if (found.size === 0) return new Map<string, string>();
    const filled = await fillClickUrls(trx, [...found.values()], unsubscribeUrl);
    const urls = new Map([...found.keys()].map((key, i) => [key, filled[i]]));
    const pairs = new Map<string, ClickRef>();
    const messageHits = new Map<number, number>();
    const linkHits = new Map<number, number>();
    for (const c of clicks) {
      if (!found.has(clickKey(c))) continue;
      pairs.set(clickKey(c), c);
      messageHits.set(c.messageId, (messageHits.get(c.messageId) ?? 0) + 1);
      linkHits.set(c.linkId, (linkHits.get(c.linkId) ?? 0) + 1);
    }
    // Ascending ids, so that concurrent batches lock rows in the same order.
    const messageIds = [...messageHits.keys()].sort((a, b) => a - b);
    const linkIds = [...linkHits.keys()].sort((a, b) => a - b);
    const firstOnLink = await trx
      .insertInto('link_clicks')
      .values([...pairs.values()].map((p) => ({ message_id: p.messageId, link_id: p.linkId, first_clicked_at: at })))
      .onConflict((oc) => oc.columns(['message_id', 'link_id']).doNothing())
      .returning('link_id')
      .execute();
    const linkFirsts = new Map<number, number>();
    for (const r of firstOnLink) linkFirsts.set(r.link_id, (linkFirsts.get(r.link_id) ?? 0) + 1);
    const firstClicks = await trx
      .updateTable('mail_messages')
      .set({ first_clicked_at: at })
      .where('id', 'in', messageIds)
      .where('first_clicked_at', 'is', null)
      .returning('id')
      .execute();
    const firstOpens = await trx
      .updateTable('mail_messages')
      .set((eb) => ({ first_opened_at: at, opens: eb('opens', '+', 1) }))
      .where('id', 'in', messageIds)
      .where('first_opened_at', 'is', null)
      .returning('id')
      .execute();
    const clicked = new Set(firstClicks.map((r) => r.id));
    const opened = new Set(firstOpens.map((r) => r.id));
    const rows = await trx
      .updateTable('mail_messages')
      .set((eb) => ({ clicks: eb('clicks', '+', caseOf('id', messageHits)) }))
      .where('id', 'in', messageIds)
      .returning([...EVENT_COLUMNS, ...sourceKeys(kinds)])
      .execute();
    await trx
      .updateTable('tracked_links')
      .set((eb) => ({
        total_clicks: eb('total_clicks', '+', caseOf('id', linkHits)),
        unique_clicks: eb('unique_clicks', '+', caseOf('id', linkFirsts)),
      }))
      .where('id', 'in', linkIds)
      .execute();
    const utrs = await addToSources(
      trx,
      kinds,
      rows.map((message) => ({
        message,
        delta: {
          total_clicks: messageHits.get(message.id)!,
          unique_clicks: clicked.has(message.id) ? 1 : 0,
          total_opens: opened.has(message.id) ? 1 : 0,
          unique_opens: opened.has(message.id) ? 1 : 0,
        },
      })),
    );
    await addToHours(
      trx,
      kinds,
      rows.map((message) => ({ message, delta: { clicks: messageHits.get(message.id)!, opens: opened.has(message.id) ? 1 : 0 } })),
      now,
    );
    // One event per hit, in the order the hits came.
    const byId = new Map(rows.map((message) => [Number(message.id), message]));
    const events = clicks.flatMap((c) => {
      const url = urls.get(clickKey(c));
      const message = byId.get(c.messageId);
      return url === undefined || !message ? [] : [{ message, extra: { url } }];
    });
    await emitMessageEvents(trx, kinds, 'message.clicked', events, utrs, now);
    return urls;
  });
}

/**
 * Counts the first unsubscribe made through a message: its `unsubscribed` flag goes 0 → 1 by a
 * conditional update, and only that change adds 1 to `unsubscribes` of what sent it. Later
 * unsubscribes through the same message (another list, or again after re-subscribing) count
 * nothing. Run it in the transaction that made the unsubscribe. Returns whether it counted.
 */
export async function recordUnsubscribe(trx: Db, kinds: MailKinds, messageId: number): Promise<boolean> {
  const row = await trx
    .updateTable('mail_messages')
    .set({ unsubscribed: 1 })
    .where('id', '=', messageId)
    .where('unsubscribed', '=', 0)
    .returning(['id', 'kind', ...sourceKeys(kinds)])
    .executeTakeFirst();
  if (!row) return false;
  await addToSources(trx, kinds, [{ message: row, delta: { unsubscribes: 1 } }]);
  return true;
}
