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
import type { QueuedMessage } from '../db/types.js';
import { fillClickUrls } from '../delivery/click-links.js';
import type { ClickRef } from '../delivery/tracking.js';
import { emitEvents, type EventType, type OutgoingEvent } from '../events/outbox.js';
import { isoMicros } from '../util/time.js';
import type { MailKinds, SourceCounter } from './queue.types.js';
import { recordSoftBounce, suppressAddress } from './bounced-addresses.js';

/** The columns of a message that events read: its kind, and what names its source. */
export type CountedMessage = Pick<QueuedMessage, 'id' | 'kind'> & Partial<QueuedMessage>;

/** The message columns a door returns for the outgoing events (with `sourceKeys`). */
export const EVENT_COLUMNS = ['id', 'kind', 'user_id', 'email', 'email_key', 'contact_id', 'message_id'] as const;

/** A message an event counted on, with its address (the address's effects follow from it) and what its webhook event says. */
export type EventMessage = CountedMessage & Pick<QueuedMessage, 'user_id' | 'email' | 'email_key' | 'contact_id' | 'message_id'>;

/** A message as the public pages need it. */
export interface PublicMessage {
  id: number;
  user_id: number;
  kind: string;
  email: string;
  /** The unsubscribe group the message was sent under; null when it has none (global only). */
  groupId: number | null;
  /** The contact it was sent to; null when none. */
  contactId: number | null;
}

/** The message columns that name a source, over every kind: what a counted row must carry. */
export function sourceKeys(kinds: MailKinds): Array<keyof QueuedMessage & string> {
  return [...new Set([...kinds.values()].flatMap((k) => (k.source ? [k.source.key] : [])))];
}

/** The id of the source row a message names, or null (a kind without statistics, or none named). */
function sourceIdOf(kinds: MailKinds, message: CountedMessage): number | null {
  const source = kinds.get(message.kind)?.source;
  const id = source ? message[source.key] : null;
  return typeof id === 'number' ? id : id == null ? null : Number(id);
}

/** The key of a message's source in the maps below: `<kind>:<source id>`. */
function sourceKeyOf(kinds: MailKinds, message: CountedMessage): string | null {
  const id = sourceIdOf(kinds, message);
  return id === null ? null : `${message.kind}:${id}`;
}

/**
 * Adds each message's delta to the counters of its source: one update per source row, in a fixed
 * order (so concurrent batches lock rows alike). Messages of kinds without statistics count nothing.
 * Returns the utr of each source row it updated, by `sourceKeyOf` (read by the same statements).
 */
async function addToSources(
  trx: Db,
  kinds: MailKinds,
  items: Array<{ message: CountedMessage; delta: Partial<Record<SourceCounter, number>> }>,
): Promise<Map<string, string>> {
  const utrs = new Map<string, string>();
  const per = new Map<string, { kind: string; id: number; delta: Partial<Record<SourceCounter, number>> }>();
  for (const { message, delta } of items) {
    const id = sourceIdOf(kinds, message);
    if (id === null) continue;
    const key = `${message.kind}:${id}`;
    const entry = per.get(key) ?? { kind: message.kind, id, delta: {} };
    for (const [counter, n] of Object.entries(delta) as Array<[SourceCounter, number]>)
      entry.delta[counter] = (entry.delta[counter] ?? 0) + n;
    per.set(key, entry);
  }
  for (const key of [...per.keys()].sort()) {
    const { kind, id, delta } = per.get(key)!;
    const source = kinds.get(kind)!.source!;
    const sets = (Object.entries(delta) as Array<[SourceCounter, number]>)
      .filter(([, n]) => n !== 0)
      .map(([counter, n]) => {
        const column = sql.ref(source.counters[counter]);
        return sql`${column} = ${column} + ${n}`;
      });
    if (sets.length === 0) continue;
    const { rows } = await sql<{ utr: string }>`
      update ${sql.table(source.table)} set ${sql.join(sets)} where id = ${id} returning ${sql.ref(source.utr)} as utr`.execute(trx);
    if (rows[0]) utrs.set(key, rows[0].utr);
  }
  return utrs;
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

/** What an event adds to its source's hour. */
type HourCounter = 'delivered' | 'opens' | 'clicks';

/** The UTC hour of a time, as the timeline names it: `YYYY-MM-DD HH:00:00`. */
export function hourOf(at: Date): string {
  return `${at.toISOString().slice(0, 13).replace('T', ' ')}:00:00`;
}

/**
 * Adds each message's delta to its source's row of `engagement_hours` for the hour of `now`: one
 * upsert per source, in a fixed order. Messages of kinds without statistics count nothing.
 */
async function addToHours(
  trx: Db,
  kinds: MailKinds,
  items: Array<{ message: CountedMessage; delta: Partial<Record<HourCounter, number>> }>,
  now: Date,
): Promise<void> {
  const per = new Map<string, { table: string; id: number; delivered: number; opens: number; clicks: number }>();
  for (const { message, delta } of items) {
    const id = sourceIdOf(kinds, message);
    if (id === null) continue;
    const table = kinds.get(message.kind)!.source!.table;
    const key = `${table}:${id}`;
    const entry = per.get(key) ?? { table, id, delivered: 0, opens: 0, clicks: 0 };
    entry.delivered += delta.delivered ?? 0;
    entry.opens += delta.opens ?? 0;
    entry.clicks += delta.clicks ?? 0;
    per.set(key, entry);
  }
  const hour = hourOf(now);
  for (const key of [...per.keys()].sort()) {
    const e = per.get(key)!;
    if (e.delivered === 0 && e.opens === 0 && e.clicks === 0) continue;
    await sql`
      insert into engagement_hours (source_table, source_id, hour, delivered, opens, clicks)
      values (${e.table}, ${e.id}, ${hour}, ${e.delivered}, ${e.opens}, ${e.clicks})
      on conflict (source_table, source_id, hour) do update set
        delivered = engagement_hours.delivered + excluded.delivered,
        opens = engagement_hours.opens + excluded.opens,
        clicks = engagement_hours.clicks + excluded.clicks`.execute(trx);
  }
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

export type { ClickRef };

/** A click on a link that belongs to its message: what the redirect needs. */
export interface ClickedLink {
  messageId: number;
  linkId: number;
  /** The link's URL as the design has it (`((placeholders))` kept). */
  url: string;
  email: string;
  payload: string | null;
  contactId: number | null;
  campaignTable: string;
  campaignId: number;
}

/** The key of a click in the maps below. */
export function clickKey(c: ClickRef): string {
  return `${c.messageId}:${c.linkId}`;
}

/**
 * The clicks (by `clickKey`) whose link belongs to their message: the link's source (where its
 * clicks are counted) is the one the message's kind names for it, in the same account. Clicks
 * naming a message or link that does not exist, or a link of another campaign, are left out.
 * Two queries, whatever the number of clicks.
 */
export async function findClickedLinks(db: Db, kinds: MailKinds, clicks: readonly ClickRef[]): Promise<Map<string, ClickedLink>> {
  const found = new Map<string, ClickedLink>();
  if (clicks.length === 0) return found;
  const messageIds = [...new Set(clicks.map((c) => c.messageId))];
  const linkIds = [...new Set(clicks.map((c) => c.linkId))];
  const [messages, links] = await Promise.all([
    db
      .selectFrom('mail_messages')
      .select(['id', 'kind', 'user_id', 'email', 'payload', 'contact_id', ...sourceKeys(kinds)])
      .where('id', 'in', messageIds)
      .execute(),
    db
      .selectFrom('tracked_links')
      .select(['id', 'user_id', 'source_table', 'source_id', 'campaign_table', 'campaign_id', 'url'])
      .where('id', 'in', linkIds)
      .execute(),
  ]);
  const messageById = new Map(messages.map((m) => [m.id, m]));
  const linkById = new Map(links.map((l) => [l.id, l]));
  for (const c of clicks) {
    const m = messageById.get(c.messageId);
    const l = linkById.get(c.linkId);
    if (!m || !l || m.user_id !== l.user_id) continue;
    if (kinds.get(m.kind)?.source?.table !== l.source_table || sourceIdOf(kinds, m) !== Number(l.source_id)) continue;
    found.set(clickKey(c), {
      messageId: m.id,
      linkId: l.id,
      url: l.url,
      email: m.email,
      payload: m.payload,
      contactId: m.contact_id,
      campaignTable: l.campaign_table,
      campaignId: Number(l.campaign_id),
    });
  }
  return found;
}

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

/**
 * The message a public link names, with the unsubscribe group it was sent under (its source's;
 * none for a kind without one); undefined when it no longer exists.
 */
export async function findPublicMessage(db: Db, kinds: MailKinds, messageId: number): Promise<PublicMessage | undefined> {
  const row = await db
    .selectFrom('mail_messages')
    .select(['id', 'user_id', 'kind', 'email', 'contact_id', ...sourceKeys(kinds)])
    .where('id', '=', messageId)
    .executeTakeFirst();
  if (!row) return undefined;
  const source = kinds.get(row.kind)?.source;
  const sourceId = sourceIdOf(kinds, row);
  let groupId: number | null = null;
  if (source && sourceId !== null) {
    const { rows } = await sql<{ group_id: number | null }>`
      select ${sql.ref(source.group)} as group_id from ${sql.table(source.table)} where id = ${sourceId}`.execute(db);
    groupId = rows[0]?.group_id ?? null;
  }
  return {
    id: row.id,
    user_id: row.user_id,
    kind: row.kind,
    email: row.email,
    groupId: groupId === null ? null : Number(groupId),
    contactId: row.contact_id === null ? null : Number(row.contact_id),
  };
}
