/**
 * The ledger: what happened to a message after it was queued. Every producer of an event (the
 * queue's marks, the open pixel, the click redirect, the unsubscribe and preferences pages, bounce
 * and complaint intake, the relays' webhooks) hands its events to `record`, and only to it. One
 * pipeline applies them in the caller's transaction, so an event, its counters, its hours and its
 * webhook event are stored together or not at all:
 *
 * 1. each kind's guarded update (`transitions.ts`), once per kind for the whole list, ids ascending;
 * 2. the counter deltas of every counted event, summed per source row: one update per row, in a fixed order;
 * 3. the hour deltas, summed per source and hour: one upsert each (`engagement_hours`);
 * 4. the webhook events (`message.*`) of the counted events, in the list's order: one `emitEvents` call.
 *
 * The kinds come as a parameter (the process's registry): the ledger names no kind of mail. Code
 * outside src/ledger/ imports this file only.
 */
import type { Db } from '../db/index.js';
import { emitEvents, type OutgoingEvent } from '../events/outbox.js';
import { addToHours, addToSources, hourOf, sourceKeyOf, type EventMessage } from './sources.js';
import type { Counted, LedgerContext, LedgerEvent } from './events.js';
import { TRANSITIONS, type Transition } from './transitions.js';

// What the rest of the code may use of the ledger besides `record`: the columns a delivered
// event's message carries, and the helpers that read which source a message names.
export { eventColumns, hourOf, sourceIdOf, sourceKeys, type CountedMessage, type EventMessage } from './sources.js';
export { TRAP_LINK } from './events.js';
export type {
  BouncedEvent,
  ClickedEvent,
  ComplainedEvent,
  DeliveredEvent,
  LedgerContext,
  LedgerEvent,
  OpenedEvent,
  UnsubscribedEvent,
} from './events.js';

/** The most `opened` events one `record` call takes (well under both engines' parameter limits). */
export const MAX_OPENS_BATCH = 1000;

/** The most `clicked` events one `record` call takes (well under both engines' parameter limits). */
export const MAX_CLICKS_BATCH = 500;

/** The transition of an event's kind, as the pipeline uses it (any kind). */
const transitionOf = (type: LedgerEvent['type']) => TRANSITIONS[type] as Transition<LedgerEvent>;

/**
 * Records `events` in `trx` (see the pipeline above), at `now`. Within one call the kinds apply in
 * the order of `TRANSITIONS`; an event that does not count (a repeat, a message that no longer
 * exists or is not in the state its kind needs) changes nothing. Webhook events are written only
 * for messages of kinds with a source, with `source` (the kind), `utr` (the source row's), `email`,
 * `contact_id`, `message_id` and the kind's extra data. Returns, for each event in the order given,
 * the message it counted on, or null when it did not count.
 */
export async function record(trx: Db, ctx: LedgerContext, events: readonly LedgerEvent[]): Promise<Array<EventMessage | null>> {
  const counted: Array<Counted<LedgerEvent>> = [];
  for (const type of Object.keys(TRANSITIONS) as Array<LedgerEvent['type']>) {
    const batch = events.flatMap((event, index) => (event.type === type ? [{ index, event }] : []));
    if (batch.length > 0) counted.push(...(await transitionOf(type).apply(trx, ctx, batch)));
  }
  if (counted.length === 0) return events.map(() => null);
  const utrs = await addToSources(
    trx,
    ctx.kinds,
    counted.map((c) => ({ message: c.message, counters: transitionOf(c.event.type).counters(c) })),
  );
  const nowHour = hourOf(ctx.now);
  await addToHours(
    trx,
    ctx.kinds,
    counted.flatMap((c) =>
      transitionOf(c.event.type)
        .hours(c, nowHour)
        .map(({ hour, delta }) => ({ message: c.message, hour, delta })),
    ),
  );
  counted.sort((a, b) => a.index - b.index);
  await emitEvents(trx, ctx.now, webhookEvents(ctx, counted, utrs));
  const result: Array<EventMessage | null> = events.map(() => null);
  for (const c of counted) result[c.index] = c.message;
  return result;
}

/** The outgoing webhook events of the counted events that have one (messages of kinds with a source). */
function webhookEvents(
  ctx: LedgerContext,
  counted: ReadonlyArray<Counted<LedgerEvent>>,
  utrs: ReadonlyMap<string, string>,
): OutgoingEvent[] {
  const out: OutgoingEvent[] = [];
  for (const c of counted) {
    const webhook = transitionOf(c.event.type).webhook;
    const key = sourceKeyOf(ctx.kinds, c.message);
    if (!webhook || key === null || c.quiet) continue;
    const { message } = c;
    const data = {
      source: message.kind,
      utr: utrs.get(key) ?? null,
      email: message.email,
      contact_id: message.contact_id == null ? null : Number(message.contact_id),
      message_id: message.message_id ?? null,
      ...webhook.extra?.(c),
    };
    out.push({ userId: message.user_id, type: webhook.type, data, email: message.email });
  }
  return out;
}
