/**
 * For each kind of event the ledger records (`events.ts`), its transition: the guarded update
 * that decides whether (and how) an event counts, the deltas it adds to the counters and hours of
 * what sent the message, and its outgoing webhook event. "Counts" is always decided by a
 * conditional write (`WHERE … IS NULL`, `= 0`, insert-or-nothing) and the rows it changed, never
 * by reading first, so a repeated or concurrent event counts once. The pipeline in `ledger.ts`
 * runs each kind's update once per batch (ids ascending, so concurrent transactions lock rows in
 * the same order) and then sums the deltas of every counted event.
 */
import type { Db } from '../db/index.js';
import type { EventType } from '../events/outbox.js';
import { applyAddressEvents } from '../suppression/suppression.policy.js';
import type {
  BouncedEvent,
  ClickedEvent,
  ComplainedEvent,
  DeliveredEvent,
  Counted,
  Indexed,
  LedgerContext,
  LedgerEvent,
  OpenedEvent,
  UnsubscribedEvent,
} from './events.js';
import { ascending, tally } from './batch.js';
import { addOpens, setBounceTypes, setFlag } from './ledger.writes.js';
import { applyClicks } from './clicks.js';
import { hourOf, type CounterDeltas, type EventMessage, type HourDeltas } from './sources.js';

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

/** Counted entries of `batch` whose message is in `rows`, in the batch's order; `flags` decides each one's firsts. */
function countedOf<E extends { id: number }>(
  batch: ReadonlyArray<Indexed<E>>,
  rows: readonly EventMessage[],
  flags: (id: number, event: E) => Pick<Counted<E>, 'firstOpen' | 'firstClick' | 'firstHumanOpen'> = () => ({}),
): Array<Counted<E>> {
  const byId = new Map(rows.map((m) => [Number(m.id), m]));
  return batch.flatMap((b) => {
    const message = byId.get(b.event.id);
    return message ? [{ ...b, message, ...flags(b.event.id, b.event) }] : [];
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
    const counted: Array<Counted<BouncedEvent>> = [];
    for (const after of ['attempt', 'accept'] as const) {
      const first = firstPerId(batch.filter((b) => b.event.after === after));
      if (first.size === 0) continue;
      const ids = ascending(first.keys());
      const types = new Map(ids.map((id) => [id, first.get(id)!.event.bounce]));
      const rows = await setBounceTypes(trx, kinds, ids, types, after, now);
      // The addresses' effects in the order of the ids (a hard bounce before a later soft one): the policy's.
      const sorted = rows.sort((a, b) => Number(a.id) - Number(b.id));
      await applyAddressEvents(
        trx,
        sorted.map((message) => {
          const { event } = first.get(Number(message.id))!;
          const type = event.bounce === 'hard' ? ('hard_bounce' as const) : ('soft_bounce' as const);
          return { type, address: message, detail: event.detail, messageId: message.id };
        }),
        now,
      );
      for (const message of sorted) counted.push({ ...first.get(Number(message.id))!, message });
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
    const rows = await setFlag(trx, kinds, 'complained', ascending(first.keys()));
    const sorted = rows.sort((a, b) => Number(a.id) - Number(b.id));
    // The complainer's suppression now; its unsubscribe is intake's, after the count (the policy's other part).
    await applyAddressEvents(
      trx,
      sorted.map((message) => ({ type: 'complaint' as const, address: message, detail: first.get(Number(message.id))!.event.detail })),
      now,
      'suppress',
    );
    return countedOf([...first.values()], sorted);
  },
  counters: () => ({ spam_reports: 1 }),
  hours: () => [],
  webhook: { type: 'message.complained' },
};

/**
 * Every open counts (in the message's `opens`, the source's `total_opens`, the hour's opens, and its
 * own `message.opened` event, whose `machine` says whose it was); a message's first (its
 * `first_opened_at` set) also adds 1 to `unique_opens`. A machine's open also counts in
 * `machine_opens`; a person's sets when a person last opened the message (`last_human_opened_at`,
 * `human_pixel_opened_at`), and the message's first person's open (or click) adds 1 to
 * `unique_human_opens`. Three statements for the batch (two without people's opens). Ids of
 * messages that no longer exist count nothing.
 */
const opened: Transition<OpenedEvent> = {
  async apply(trx, { kinds, now }, batch) {
    const hits = tally(batch.map((b) => b.event.id));
    const machineHits = tally(batch.filter((b) => b.event.machine).map((b) => b.event.id));
    const people = ascending(new Set(batch.filter((b) => !b.event.machine).map((b) => b.event.id)));
    const { firsts, humanFirsts, rows } = await addOpens(trx, kinds, { ids: ascending(hits.keys()), people, hits, machineHits }, now);
    return countedOf(batch, rows, (id, event) => ({
      firstOpen: firsts.delete(id),
      firstHumanOpen: !event.machine && humanFirsts.delete(id),
    }));
  },
  counters: (c) => ({
    total_opens: 1,
    unique_opens: c.firstOpen ? 1 : 0,
    machine_opens: c.event.machine ? 1 : 0,
    unique_human_opens: c.firstHumanOpen ? 1 : 0,
  }),
  hours: (_c, hour) => [{ hour, delta: { opens: 1 } }],
  webhook: { type: 'message.opened', extra: ({ event }) => ({ machine: Boolean(event.machine) }) },
};

/**
 * A click: logged, judged and counted as a person's or a scanner's by `applyClicks` (clicks.ts),
 * which also takes back earlier clicks of the message that the new ones show to be a scanner's.
 * Each counted click carries its deltas; only a person's has a `message.clicked` event (with `url`).
 */
const clicked: Transition<ClickedEvent> = {
  apply: applyClicks,
  counters: (c) => c.counters ?? {},
  hours: (c) => c.hours ?? [],
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
    const rows = await setFlag(trx, kinds, 'unsubscribed', ascending(first.keys()));
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
