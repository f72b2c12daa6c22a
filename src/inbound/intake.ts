/**
 * What comes back after the SMTP accept: bounces and spam complaints, from any source (the keyed
 * report route, raw mail through the inbound route or SMTP listener, the relays' webhooks), taken
 * in through one function. Every source turns what it received into `InboundEvent`s and calls
 * `takeInEvent`; matching, de-duplication and the effects live here only.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import type { AppDeps } from '../deps.js';
import type { MailKinds } from '../messages/messages.kinds.js';
import type { Db } from '../db/index.js';
import type { AccountAddress } from '../suppression/suppression.writes.js';
import { applyAddressEvents, type AddressEvent } from '../suppression/suppression.policy.js';
import { record, type LedgerEvent } from '../messages/ledger.js';
import { isEmail } from '../util/email.js';
import { isoMicros } from '../util/time.js';
import { findNamedMessages, type NamedMessage } from './intake.match.js';
import { batcher, ItemFailed, type Batcher } from '../jobs/batcher.js';
import { metricOnce } from '../ops/metrics.js';

/** Where an event came from (its log line and metric label). */
export type InboundSource = 'report' | 'inbound' | 'smtp' | 'sendgrid' | 'mailgun' | 'postmark' | 'ses';

/** One bounce or complaint about one recipient, as a source reported it. */
export interface InboundEvent {
  source: InboundSource;
  kind: 'bounce' | 'complaint';
  /** For bounces: `hard` (the address or domain does not exist) or `soft` (anything else). Null for complaints. */
  type: 'hard' | 'soft' | null;
  /** The recipient the event concerns, as reported (null when the report names none). */
  email: string | null;
  /** What names the message, strongest first: a VERP address or token, then the original Message-ID. */
  verp?: string | null;
  messageId?: string | null;
  /** The server's answer or the provider's description (kept as the suppression's detail). */
  reason?: string | null;
  /**
   * Identifies the event for de-duplication: the provider's event id where it has one; else the
   * source derives one (e.g. a hash of the report). The same key twice counts once.
   */
  eventKey?: string | null;
}

/** What became of an event. */
export interface IntakeResult {
  /** Whether it named a message of this installation (and the account, when one was given). */
  matched: boolean;
  /** False when the same event was taken in before. */
  counted: boolean;
  /** The address the event concerns: the matched message's, else the one reported (null when none). */
  recipient?: string | null;
}

/**
 * Takes in one event: matches it to the exact message (VERP token, else `Message-ID`; within
 * `opts.userId`'s account when given), counts it once, and applies its effects in its batch's
 * transaction (see docs/bounces.md); resolves once that transaction is committed. An event that names no message changes nothing but a log line and a
 * metric. `kinds`: the kinds of mail the process knows (which say where an event is counted).
 */
export type TakeInEvent = (deps: AppDeps, kinds: MailKinds, event: InboundEvent, opts?: { userId?: number }) => Promise<IntakeResult>;

/** `inbound_batch_events` on the app's registry: how many events each intake transaction wrote. */
const batchHistogram = (registry: Registry): Histogram =>
  metricOnce(
    registry,
    'inbound_batch_events',
    () =>
      new Histogram({
        name: 'inbound_batch_events',
        help: 'Bounces and complaints written per intake transaction (events arriving together share one).',
        buckets: [1, 2, 5, 10, 20, 50, 100],
        registers: [registry],
      }),
  );

/** `inbound_events_total{source,kind,matched,counted}` on the app's registry. */
const eventsCounter = (registry: Registry): Counter<'source' | 'kind' | 'matched' | 'counted'> =>
  metricOnce(
    registry,
    'inbound_events_total',
    () =>
      new Counter({
        name: 'inbound_events_total',
        help: 'Bounces and complaints taken in, by source, kind, whether they named a message of this installation, and whether they counted (not a repeat).',
        labelNames: ['source', 'kind', 'matched', 'counted'] as const,
        registers: [registry],
      }),
  );

/** The most events written in one transaction. */
export const MAX_INTAKE_BATCH = 100;

/** One event waiting for its batch. */
interface Waiting {
  event: InboundEvent;
  opts: { userId?: number };
}

/** What the batch decided for one event before the transaction. */
interface Planned extends Waiting {
  message: NamedMessage | undefined;
  /** A keyed report naming no message: applied to the address within the caller's account. */
  address: AccountAddress | null;
}

/** The longest an event waits for the reports being read before its batch starts anyway. */
const MAX_WAIT_MS = 10;

/** The most intake batches written at the same time on PostgreSQL (each on its own connection). */
const PARALLEL_BATCHES = 2;

/** The intake batcher of each database (so of each app and its tests). */
const batchers = new WeakMap<object, Batcher<Waiting, IntakeResult>>();

/**
 * The intake batcher of the app's database, made on first use: a batch starts on the next turn,
 * once no report is still being read (at most MAX_WAIT_MS), and each caller is answered after
 * its batch's commit. The kinds are the process's, the same at every call.
 */
function batcherOf(deps: AppDeps, kinds: MailKinds): Batcher<Waiting, IntakeResult> {
  let events = batchers.get(deps.database);
  if (!events) {
    // SQLite has one connection: one batch at a time.
    const sqlite = deps.database.engine === 'sqlite';
    events = batcher<Waiting, IntakeResult>((batch) => takeInBatch(deps, kinds, batch), {
      start: 'tick',
      onFailure: 'reject',
      max: MAX_INTAKE_BATCH,
      parallel: sqlite ? 1 : PARALLEL_BATCHES,
      maxWaitMs: MAX_WAIT_MS,
    });
    batchers.set(deps.database, events);
  }
  return events;
}

/**
 * Says a report is being read (raw mail being parsed): the next batch waits for its events (at
 * most MAX_WAIT_MS), so the reports that arrive together share a transaction. Call the function
 * returned once its events are handed to `takeInEvent`, or when it has none.
 */
export function expectEvents(deps: AppDeps, kinds: MailKinds): () => void {
  return batcherOf(deps, kinds).expect();
}

/** Remembers the batch's event keys; returns those seen for the first time (a key twice in the batch: its first event only). */
async function firstTimes(trx: Db, keys: readonly string[], now: Date): Promise<Set<string>> {
  const unique = [...new Set(keys.map((k) => k.slice(0, 500)))];
  if (unique.length === 0) return new Set();
  const rows = await trx
    .insertInto('inbound_events')
    .values(unique.map((event_key) => ({ event_key, created_at: isoMicros(now) })))
    .onConflict((oc) => oc.column('event_key').doNothing())
    .returning('event_key')
    .execute();
  return new Set(rows.map((r) => r.event_key));
}

/** An event reported for an address of the account without naming a message, as the policy takes it. */
function addressEvent(event: InboundEvent, address: AccountAddress): AddressEvent {
  const type = event.kind === 'complaint' ? 'complaint' : event.type === 'hard' ? 'hard_bounce' : 'soft_bounce';
  return { type, address, detail: event.reason ?? null };
}

/**
 * Applies a batch in one transaction: the new event keys remembered, every matched event handed
 * to the ledger's `record` in one call (the bounces and complaints of several reports counted
 * together), the complainers unsubscribed, the address-only reports applied. Returns, per
 * planned event, whether it counted.
 */
async function applyBatch(deps: AppDeps, kinds: MailKinds, planned: readonly Planned[], now: Date): Promise<boolean[]> {
  const counted = planned.map(() => false);
  const touching = planned.map((p, i) => ({ p, i })).filter(({ p }) => p.message || p.address);
  if (touching.length === 0) return counted;
  await deps.database.db.transaction().execute(async (trx) => {
    const fresh = await firstTimes(
      trx,
      touching.flatMap(({ p }) => (p.event.eventKey ? [p.event.eventKey] : [])),
      now,
    );
    const claimed = new Set<string>();
    // An event without a key is always new; a key counts for the first event that carries it.
    const isFirst = ({ eventKey }: InboundEvent) => {
      if (!eventKey) return true;
      const key = eventKey.slice(0, 500);
      if (!fresh.has(key) || claimed.has(key)) return false;
      claimed.add(key);
      return true;
    };
    const first = touching.filter(({ p }) => isFirst(p.event));
    const toMessages = first.filter(({ p }) => p.message);
    const ledger: LedgerEvent[] = toMessages.map(({ p }) =>
      p.event.kind === 'complaint'
        ? { type: 'complained', id: p.message!.id, detail: p.event.reason ?? null }
        : { type: 'bounced', id: p.message!.id, after: 'accept', bounce: p.event.type ?? 'soft', detail: p.event.reason ?? null },
    );
    const results = ledger.length > 0 ? await record(trx, { kinds, now }, ledger) : [];
    const complainers: AddressEvent[] = [];
    for (const [j, { p, i }] of toMessages.entries()) {
      const message = results[j];
      counted[i] = message !== null;
      if (message && p.event.kind === 'complaint')
        complainers.push({ type: 'complaint', address: message, detail: p.event.reason ?? null, contactId: message.contact_id });
    }
    // The ledger suppressed the complainers as it counted; the policy's unsubscribe follows.
    await applyAddressEvents(trx, complainers, now, 'unsubscribe');
    const addressOnly = first.filter(({ p }) => !p.message && p.address);
    await applyAddressEvents(
      trx,
      addressOnly.map(({ p }) => addressEvent(p.event, p.address!)),
      now,
    );
    for (const { i } of addressOnly) counted[i] = true;
  });
  batchHistogram(deps.metrics).observe(touching.length);
  return counted;
}

/** Decides what each event of a batch is about: the message it names (within its account, when keyed), or its address. */
async function plan(deps: AppDeps, batch: readonly Waiting[]): Promise<Planned[]> {
  const found = await findNamedMessages(
    deps,
    batch.map((w) => w.event),
  );
  return batch.map((w, i) => {
    const { event, opts } = w;
    const message = found[i] && (opts.userId === undefined || found[i]!.user_id === opts.userId) ? found[i] : undefined;
    const reported = event.email?.trim() || null;
    const addressOnly = !message && opts.userId !== undefined && !event.verp && !event.messageId && reported !== null && isEmail(reported);
    const address = addressOnly ? { user_id: opts.userId!, email: reported!, email_key: reported!.toLowerCase() } : null;
    return { ...w, message, address };
  });
}

/** The log line and the metric sample of an event taken in; its result. */
function report(deps: AppDeps, p: Planned, counted: boolean): IntakeResult {
  const { event, message, address } = p;
  const recipient = message?.email ?? (event.email?.trim() || null);
  const matched = message !== undefined;
  eventsCounter(deps.metrics).inc({ source: event.source, kind: event.kind, matched: String(matched), counted: String(counted) });
  deps.log.info(
    {
      source: event.source,
      address: recipient,
      kind: event.kind,
      type: event.type,
      matched,
      counted,
      messageId: message?.id,
      userId: message?.user_id ?? address?.user_id,
      reason: event.reason ?? undefined,
    },
    matched || address ? 'inbound event taken in' : 'inbound event names no message of this installation',
  );
  return { matched, counted, recipient };
}

/**
 * Takes in one batch: plans it, applies it in one transaction, and returns each event's result
 * (the batcher answers each caller after the commit, so an acknowledged event is stored). When
 * the batch fails and holds several events, each is taken in alone, so one event that cannot be
 * taken in fails only its own caller.
 */
async function takeInBatch(deps: AppDeps, kinds: MailKinds, batch: Waiting[]): Promise<Array<IntakeResult | ItemFailed>> {
  let planned: Planned[];
  let counted: boolean[];
  try {
    planned = await plan(deps, batch);
    counted = await applyBatch(deps, kinds, planned, deps.clock.now());
  } catch (err) {
    if (batch.length === 1) return [new ItemFailed(err)];
    const alone: Array<IntakeResult | ItemFailed> = [];
    for (const one of batch) alone.push(...(await takeInBatch(deps, kinds, [one])));
    return alone;
  }
  return planned.map((p, i) => {
    try {
      return report(deps, p, counted[i]);
    } catch (err) {
      return new ItemFailed(err);
    }
  });
}

/**
 * Takes in one event (see `TakeInEvent`): matched to its message, or, for a keyed report that names
 * no message at all (`opts.userId` given, no VERP, no Message-ID), applied to the reported address
 * within that account. An event that names a message not of this installation (or of another
 * account than `opts.userId`) changes nothing. Writes one log line and counts one metric sample.
 *
 * Events are written in batches (group commit, src/jobs/batcher.ts): the events that arrive together
 * (while reports are being read, or while a batch is being written) go in one transaction and one
 * `record` call, so a burst of bounces costs a few transactions instead of one each. The promise
 * resolves once its batch is committed.
 */
export const takeInEvent: TakeInEvent = (deps, kinds, event, opts = {}) => batcherOf(deps, kinds).add({ event, opts });
