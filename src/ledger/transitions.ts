/**
 * For each kind of event the ledger records (`events.ts`), its transition: the guarded update
 * that decides whether (and how) an event counts, the deltas it adds to the counters and hours of
 * what sent the message, and its outgoing webhook event. "Counts" is always decided by a
 * conditional write (`WHERE … IS NULL`, `= 0`, insert-or-nothing) and the rows it changed, never
 * by reading first, so a repeated or concurrent event counts once. The pipeline in `ledger.ts`
 * runs each kind's update once per batch (ids ascending, so concurrent transactions lock rows in
 * the same order) and then sums the deltas of every counted event.
 */
import { sql } from 'kysely';
import type { Db } from '../db/index.js';
import type { EventType } from '../events/outbox.js';
import { recordSoftBounce, suppressAddress } from '../suppression/suppression.writes.js';
import { isoMicros } from '../util/time.js';
import type {
  BouncedEvent,
  ClickedEvent,
  ComplainedEvent,
  DeliveredEvent,
  LedgerContext,
  LedgerEvent,
  OpenedEvent,
  UnsubscribedEvent,
} from './events.js';
import { eventColumns, hourOf, type CounterDeltas, type EventMessage, type HourDeltas } from './sources.js';

/** An event with its place in the list given to `record`. */
export interface Indexed<E> {
  index: number;
  event: E;
}

/** An event that counted: the message row its guarded update returned, and what it was the first of. */
export interface Counted<E> extends Indexed<E> {
  message: EventMessage;
  /** The message's first open (an open, or a click of a message never opened). */
  firstOpen?: boolean;
  /** The message's first click (on any link). */
  firstClick?: boolean;
}

/**
 * One kind of event: its guarded update over a batch (returns the events that counted, in any
 * order), what a counted event adds to its source's counters and hours, and its webhook event.
 */
export interface Transition<E extends LedgerEvent> {
  apply(trx: Db, ctx: LedgerContext, batch: ReadonlyArray<Indexed<E>>): Promise<Array<Counted<E>>>;
  counters(c: Counted<E>): CounterDeltas;
  /** `nowHour`: the hour of the call's `now` (`hourOf`), read once per call. */
  hours(c: Counted<E>, nowHour: string): Array<{ hour: string; delta: HourDeltas }>;
  webhook: { type: Extract<EventType, `message.${string}`>; extra?: (c: Counted<E>) => Record<string, unknown> } | null;
}

/** The first event of each message id in the batch (a repeat in the same batch counts nothing more), by id. */
function firstPerId<E extends { id: number }>(batch: ReadonlyArray<Indexed<E>>): Map<number, Indexed<E>> {
  const first = new Map<number, Indexed<E>>();
  for (const b of batch) if (!first.has(b.event.id)) first.set(b.event.id, b);
  return first;
}

/** The ids of a map's keys, ascending: the lock order of every guarded update. */
const ascending = (ids: Iterable<number>) => [...ids].sort((a, b) => a - b);

/** How many times each key occurs. */
function tally(keys: readonly number[]): Map<number, number> {
  const n = new Map<number, number>();
  for (const k of keys) n.set(k, (n.get(k) ?? 0) + 1);
  return n;
}

/** `case id when … then n … else 0 end` over `counts` (typed, so PostgreSQL can plan it). */
function caseOf(counts: ReadonlyMap<number, number>) {
  if (counts.size === 0) return sql<number>`0`;
  return sql<number>`case ${sql.ref('id')} ${sql.join(
    [...counts].map(([id, n]) => sql`when ${id} then cast(${n} as integer)`),
    sql` `,
  )} else 0 end`;
}

/** Counted entries of `batch` whose message is in `rows`, in the batch's order; `flags` decides each one's firsts. */
function countedOf<E extends { id: number }>(
  batch: ReadonlyArray<Indexed<E>>,
  rows: readonly EventMessage[],
  flags: (id: number) => Pick<Counted<E>, 'firstOpen' | 'firstClick'> = () => ({}),
): Array<Counted<E>> {
  const byId = new Map(rows.map((m) => [Number(m.id), m]));
  return batch.flatMap((b) => {
    const message = byId.get(b.event.id);
    return message ? [{ ...b, message, ...flags(b.event.id) }] : [];
  });
}

/** Each message once in `delivered` of what sent it and of the hour, with its `message.delivered` event. */
const delivered: Transition<DeliveredEvent> = {
  apply: async (_trx, _ctx, batch) => batch.map((b) => ({ ...b, message: b.event.message })),
  counters: () => ({ delivered: 1 }),
  hours: (_c, hour) => [{ hour, delta: { delivered: 1 } }],
  webhook: { type: 'message.delivered' },
};

/**
 * A bounce counts once per message: its `bounce_type` is set only where still empty. It adds to
 * `bounces` and `hard_bounces` or `soft_bounces`; after the accept it also leaves `delivered`, and
 * the delivered of the hour it was accepted in. Hard: the address is suppressed for its account at
 * once; soft: the bounce joins the address's soft-bounce history (SOFT_THRESHOLD of them within 30
 * days suppress it). Its `message.bounced` event says `type` hard or soft.
 */
const bounced: Transition<BouncedEvent> = {
  async apply(trx, { kinds, now }, batch) {
    const at = isoMicros(now);
    const counted: Array<Counted<BouncedEvent>> = [];
    for (const after of ['attempt', 'accept'] as const) {
      const first = firstPerId(batch.filter((b) => b.event.after === after));
      if (first.size === 0) continue;
      const ids = ascending(first.keys());
      const types = sql.join(
        ids.map((id) => sql`when ${id} then ${first.get(id)!.event.bounce}`),
        sql` `,
      );
      const rows = await trx
        .updateTable('mail_messages')
        .set({ state: 'bounced', bounce_type: sql<string>`case ${sql.ref('id')} ${types} end`, updated_at: at })
        .where('id', 'in', ids)
        .where('bounce_type', 'is', null)
        .where('state', '=', after === 'accept' ? 'sent' : 'bounced')
        .returning([...eventColumns(kinds), 'sent_at'])
        .execute();
      for (const message of rows.sort((a, b) => Number(a.id) - Number(b.id))) {
        const { event, index } = first.get(Number(message.id))!;
        if (event.bounce === 'hard') await suppressAddress(trx, message, 'hard_bounce', event.detail, now);
        else await recordSoftBounce(trx, message, message.id, event.detail, now);
        counted.push({ index, event, message });
      }
    }
    return counted;
  },
  counters: ({ event }) => ({ bounces: 1, [`${event.bounce}_bounces`]: 1, ...(event.after === 'accept' ? { delivered: -1 } : {}) }),
  // The timeline's delivered of the accept's hour agrees with the total: the message leaves it too.
  hours: ({ event, message }) =>
    event.after === 'accept' && message.sent_at ? [{ hour: hourOf(new Date(message.sent_at)), delta: { delivered: -1 } }] : [],
  webhook: { type: 'message.bounced', extra: ({ event }) => ({ type: event.bounce }) },
};

/**
 * A complaint counts once per message (its `complained` flag goes 0 → 1): 1 in `spam_reports`, its
 * address on the account's suppression list (reason `complaint`), and its `message.complained` event.
 */
const complained: Transition<ComplainedEvent> = {
  async apply(trx, { kinds, now }, batch) {
    const first = firstPerId(batch);
    const rows = await trx
      .updateTable('mail_messages')
      .set({ complained: 1 })
      .where('id', 'in', ascending(first.keys()))
      .where('complained', '=', 0)
      .returning(eventColumns(kinds))
      .execute();
    const sorted = rows.sort((a, b) => Number(a.id) - Number(b.id));
    for (const message of sorted) await suppressAddress(trx, message, 'complaint', first.get(Number(message.id))!.event.detail, now);
    return countedOf([...first.values()], sorted);
  },
  counters: () => ({ spam_reports: 1 }),
  hours: () => [],
  webhook: { type: 'message.complained' },
};

/**
 * Every open counts (in the message's `opens`, the source's `total_opens`, the hour's opens, and its
 * own `message.opened` event); a message's first (its `first_opened_at` set) also adds 1 to
 * `unique_opens`. Two statements for the batch. Ids of messages that no longer exist count nothing.
 */
const opened: Transition<OpenedEvent> = {
  async apply(trx, { kinds, now }, batch) {
    const hits = tally(batch.map((b) => b.event.id));
    const ids = ascending(hits.keys());
    const first = await trx
      .updateTable('mail_messages')
      .set({ first_opened_at: isoMicros(now) })
      .where('id', 'in', ids)
      .where('first_opened_at', 'is', null)
      .returning('id')
      .execute();
    const firsts = new Set(first.map((r) => Number(r.id)));
    const rows = await trx
      .updateTable('mail_messages')
      .set((eb) => ({ opens: eb('opens', '+', caseOf(hits)) }))
      .where('id', 'in', ids)
      .returning(eventColumns(kinds))
      .execute();
    return countedOf(batch, rows, (id) => ({ firstOpen: firsts.delete(id) }));
  },
  counters: (c) => ({ total_opens: 1, unique_opens: c.firstOpen ? 1 : 0 }),
  hours: (_c, hour) => [{ hour, delta: { opens: 1 } }],
  webhook: { type: 'message.opened' },
};

/**
 * Every click counts: 1 in the link's `total_clicks`, the message's `clicks`, the source's
 * `total_clicks` and the hour's clicks, and its own `message.clicked` event (with `url`). The first
 * click of a message on a link adds a `link_clicks` row and 1 to the link's `unique_clicks`; a
 * message's first click (its `first_clicked_at` set) adds 1 to the source's `unique_clicks`. A
 * message clicked with no open counted yet counts its open too (a click proves it was opened).
 */
const clicked: Transition<ClickedEvent> = {
  async apply(trx, { kinds, now }, batch) {
    const at = isoMicros(now);
    const pairs = new Map(batch.map(({ event }) => [`${event.id}:${event.link}`, event]));
    const messageHits = tally(batch.map((b) => b.event.id));
    const linkHits = tally(batch.map((b) => b.event.link));
    const messageIds = ascending(messageHits.keys());
    const firstOnLink = await trx
      .insertInto('link_clicks')
      .values([...pairs.values()].map((p) => ({ message_id: p.id, link_id: p.link, first_clicked_at: at })))
      .onConflict((oc) => oc.columns(['message_id', 'link_id']).doNothing())
      .returning('link_id')
      .execute();
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
    const rows = await trx
      .updateTable('mail_messages')
      .set((eb) => ({ clicks: eb('clicks', '+', caseOf(messageHits)) }))
      .where('id', 'in', messageIds)
      .returning(eventColumns(kinds))
      .execute();
    await trx
      .updateTable('tracked_links')
      .set((eb) => ({
        total_clicks: eb('total_clicks', '+', caseOf(linkHits)),
        unique_clicks: eb('unique_clicks', '+', caseOf(tally(firstOnLink.map((r) => Number(r.link_id))))),
      }))
      .where('id', 'in', ascending(linkHits.keys()))
      .execute();
    const clicks = new Set(firstClicks.map((r) => Number(r.id)));
    const opens = new Set(firstOpens.map((r) => Number(r.id)));
    return countedOf(batch, rows, (id) => ({ firstClick: clicks.delete(id), firstOpen: opens.delete(id) }));
  },
  counters: (c) => ({
    total_clicks: 1,
    unique_clicks: c.firstClick ? 1 : 0,
    total_opens: c.firstOpen ? 1 : 0,
    unique_opens: c.firstOpen ? 1 : 0,
  }),
  hours: (c, hour) => [{ hour, delta: { clicks: 1, opens: c.firstOpen ? 1 : 0 } }],
  webhook: { type: 'message.clicked', extra: ({ event }) => ({ url: event.url }) },
};

/**
 * The first unsubscribe through a message counts once (its `unsubscribed` flag goes 0 → 1 and never
 * back): 1 in `unsubscribes`. Its webhook event is the list's `contact.unsubscribed`, written by the
 * unsubscribe itself.
 */
const unsubscribed: Transition<UnsubscribedEvent> = {
  async apply(trx, { kinds }, batch) {
    const first = firstPerId(batch);
    const rows = await trx
      .updateTable('mail_messages')
      .set({ unsubscribed: 1 })
      .where('id', 'in', ascending(first.keys()))
      .where('unsubscribed', '=', 0)
      .returning(eventColumns(kinds))
      .execute();
    return countedOf([...first.values()], rows);
  },
  counters: () => ({ unsubscribes: 1 }),
  hours: () => [],
  webhook: null,
};

/**
 * Every kind's transition, in the order the pipeline applies them within one call: an open before
 * a click of the same call, so a click of a message opened in the same batch counts no second open.
 */
export const TRANSITIONS: { [T in LedgerEvent['type']]: Transition<Extract<LedgerEvent, { type: T }>> } = {
  delivered,
  bounced,
  complained,
  opened,
  clicked,
  unsubscribed,
};
