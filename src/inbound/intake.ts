/**
 * What comes back after the SMTP accept: bounces and spam complaints, from any source (the keyed
 * report route, raw mail through the inbound route or SMTP listener, the relays' webhooks), taken
 * in through one function. Every source turns what it received into `InboundEvent`s and calls
 * `takeInEvent`; matching, de-duplication and the effects live here only.
 */
import { Counter, type Registry } from 'prom-client';
import type { AppDeps } from '../deps.js';
import type { Db } from '../db/index.js';
import { trackingLinks } from '../delivery/tracking.js';
import { MAIL_KINDS } from '../mail-kinds.js';
import { recordSoftBounce, suppressAddress, unsubscribeAddress, type AccountAddress } from '../suppression/suppression.writes.js';
import { record } from '../ledger/ledger.js';
import { bareMessageId, isEmail } from '../util/email.js';
import { isoMicros } from '../util/time.js';

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
 * `opts.userId`'s account when given), counts it once, and applies its effects in one transaction
 * (see docs/bounces.md). An event that names no message changes nothing but a log line and a
 * metric.
 */
export type TakeInEvent = (deps: AppDeps, event: InboundEvent, opts?: { userId?: number }) => Promise<IntakeResult>;

const byRegistry = new WeakMap<Registry, Counter<'source' | 'kind' | 'matched' | 'counted'>>();

/** `inbound_events_total{source,kind,matched,counted}` on the app's registry, created once per registry. */
function eventsCounter(registry: Registry): Counter<'source' | 'kind' | 'matched' | 'counted'> {
  let c = byRegistry.get(registry);
  if (!c) {
    c = new Counter({
      name: 'inbound_events_total',
      help: 'Bounces and complaints taken in, by source, kind, whether they named a message of this installation, and whether they counted (not a repeat).',
      labelNames: ['source', 'kind', 'matched', 'counted'] as const,
      registers: [registry],
    });
    byRegistry.set(registry, c);
  }
  return c;
}

/** The message a report names, as matching needs it. */
interface NamedMessage {
  id: number;
  user_id: number;
  email: string;
}

/**
 * The message an event names: the VERP token (an address `local+token@domain` or the token alone)
 * when it is genuine, else our `Message-ID` (stored without angle brackets; compared with or
 * without them, and case-insensitively through the row id it carries when a relay changed its
 * case). Undefined when it names none of this installation's messages.
 */
async function findNamedMessage(deps: AppDeps, event: InboundEvent): Promise<NamedMessage | undefined> {
  const { db } = deps.database;
  const byId = (id: number) =>
    db.selectFrom('mail_messages').select(['id', 'user_id', 'email', 'message_id']).where('id', '=', id).executeTakeFirst();
  if (event.verp) {
    const links = trackingLinks(deps.config);
    const id = links.readVerpAddress(event.verp) ?? links.readVerpToken(event.verp.trim());
    const row = id === null ? undefined : await byId(id);
    if (row) return { id: Number(row.id), user_id: row.user_id, email: row.email };
  }
  if (event.messageId) {
    const bare = bareMessageId(event.messageId);
    if (!bare || bare.length > 998) return undefined;
    const row = await db
      .selectFrom('mail_messages')
      .select(['id', 'user_id', 'email'])
      .where('message_id', 'in', [bare, `<${bare}>`])
      .orderBy('id')
      .executeTakeFirst();
    if (row) return { id: Number(row.id), user_id: row.user_id, email: row.email };
    // Ours end in `.<row id>@<host>`: a copy whose case was changed on the way still names its row.
    const m = /\.(\d{1,15})@[^@]+$/.exec(bare);
    const candidate = m ? await byId(Number(m[1])) : undefined;
    if (candidate?.message_id && bareMessageId(candidate.message_id)?.toLowerCase() === bare.toLowerCase())
      return { id: Number(candidate.id), user_id: candidate.user_id, email: candidate.email };
  }
  return undefined;
}

/** Remembers the event's key; false when it was taken in before (then nothing else is done). */
async function firstTime(trx: Db, eventKey: string | null | undefined, now: Date): Promise<boolean> {
  if (!eventKey) return true;
  const row = await trx
    .insertInto('inbound_events')
    .values({ event_key: eventKey.slice(0, 500), created_at: isoMicros(now) })
    .onConflict((oc) => oc.column('event_key').doNothing())
    .returning('event_key')
    .executeTakeFirst();
  return row !== undefined;
}

/** The effects of an event on a matched message, in the caller's transaction. Returns whether it counted. */
async function applyToMessage(trx: Db, event: InboundEvent, message: NamedMessage, now: Date): Promise<boolean> {
  const detail = event.reason ?? null;
  const ctx = { kinds: MAIL_KINDS, now };
  if (event.kind === 'complaint') {
    const [counted] = await record(trx, ctx, [{ type: 'complained', id: message.id, detail }]);
    if (counted && isEmail(counted.email.trim()))
      await unsubscribeAddress(trx, counted.user_id, counted.email, null, { now, contactId: counted.contact_id });
    return counted !== null;
  }
  const [bounced] = await record(trx, ctx, [{ type: 'bounced', id: message.id, after: 'accept', bounce: event.type ?? 'soft', detail }]);
  return bounced !== null;
}

/** The effects of an event reported for an address of the account without naming a message. */
async function applyToAddress(trx: Db, event: InboundEvent, address: AccountAddress, now: Date): Promise<void> {
  const detail = event.reason ?? null;
  if (event.kind === 'complaint') {
    await unsubscribeAddress(trx, address.user_id, address.email, null, { now });
    await suppressAddress(trx, address, 'complaint', detail, now);
  } else if (event.type === 'hard') await suppressAddress(trx, address, 'hard_bounce', detail, now);
  else await recordSoftBounce(trx, address, null, detail, now);
}

/**
 * Takes in one event (see `TakeInEvent`): matched to its message, or, for a keyed report that names
 * no message at all (`opts.userId` given, no VERP, no Message-ID), applied to the reported address
 * within that account. An event that names a message not of this installation (or of another
 * account than `opts.userId`) changes nothing. Writes one log line and counts one metric sample.
 */
export const takeInEvent: TakeInEvent = async (deps, event, opts = {}) => {
  const now = deps.clock.now();
  const { db } = deps.database;
  const found = await findNamedMessage(deps, event);
  const message = found && (opts.userId === undefined || found.user_id === opts.userId) ? found : undefined;
  const reported = event.email?.trim() || null;
  const addressOnly = !message && opts.userId !== undefined && !event.verp && !event.messageId && reported !== null && isEmail(reported);
  let counted = false;
  if (message) {
    counted = await db
      .transaction()
      .execute(async (trx) => (await firstTime(trx, event.eventKey, now)) && applyToMessage(trx, event, message, now));
  } else if (addressOnly) {
    const address = { user_id: opts.userId!, email: reported!, email_key: reported!.toLowerCase() };
    counted = await db.transaction().execute(async (trx) => {
      if (!(await firstTime(trx, event.eventKey, now))) return false;
      await applyToAddress(trx, event, address, now);
      return true;
    });
  }
  const recipient = message?.email ?? reported;
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
      userId: message?.user_id ?? (addressOnly ? opts.userId : undefined),
      reason: event.reason ?? undefined,
    },
    matched || addressOnly ? 'inbound event taken in' : 'inbound event names no message of this installation',
  );
  return { matched, counted, recipient };
};
