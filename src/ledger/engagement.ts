/**
 * The old event doors, each now one call of the ledger's `record` (kept only until every producer
 * calls `record` itself).
 */
import type { Db } from '../db/index.js';
import type { ClickRef } from '../delivery/tracking.js';
import { clickKey, clickTargets } from '../public/messages.queries.js';
import type { MailKinds } from '../queue/queue.types.js';
import { MAX_CLICKS_BATCH, MAX_OPENS_BATCH, record, type EventMessage } from './ledger.js';
import { EVENT_COLUMNS, hourOf, sourceKeys, type CountedMessage } from './sources.js';

export { EVENT_COLUMNS, hourOf, MAX_CLICKS_BATCH, MAX_OPENS_BATCH, sourceKeys, type CountedMessage, type EventMessage };

/** Messages the SMTP server accepted at `now`. */
export async function recordDelivered(trx: Db, kinds: MailKinds, messages: EventMessage[], now: Date): Promise<void> {
  await record(
    trx,
    { kinds, now },
    messages.map((message) => ({ type: 'delivered', message })),
  );
}

/** A bounce of one message: how it bounced and the server's words (kept as the suppression's detail). */
export interface MessageBounce {
  id: number;
  type: 'hard' | 'soft';
  detail: string | null;
}

/** Messages that bounced; returns those that counted. */
export async function recordBounced(
  trx: Db,
  kinds: MailKinds,
  bounces: readonly MessageBounce[],
  opts: { now: Date; after: 'attempt' | 'accept' },
): Promise<EventMessage[]> {
  const counted = await record(
    trx,
    { kinds, now: opts.now },
    bounces.map((b) => ({ type: 'bounced', id: b.id, after: opts.after, bounce: b.type, detail: b.detail })),
  );
  return counted.filter((m): m is EventMessage => m !== null);
}

/** A spam complaint about a message; returns the message when it counted. */
export async function recordComplaint(
  trx: Db,
  kinds: MailKinds,
  messageId: number,
  opts: { now: Date; detail: string | null },
): Promise<EventMessage | undefined> {
  const [counted] = await record(trx, { kinds, now: opts.now }, [{ type: 'complained', id: messageId, detail: opts.detail }]);
  return counted ?? undefined;
}

/** Counts opens, each id once per hit, in its own transaction. */
export async function recordOpens(db: Db, kinds: MailKinds, messageIds: readonly number[], now: Date): Promise<void> {
  if (messageIds.length === 0) return;
  await db.transaction().execute((trx) =>
    record(
      trx,
      { kinds, now },
      messageIds.map((id) => ({ type: 'opened', id })),
    ),
  );
}

export type { ClickRef };

/** Counts clicks in its own transaction; returns the URL of each click counted, by `clickKey`. */
export async function recordClicks(
  db: Db,
  kinds: MailKinds,
  clicks: readonly ClickRef[],
  now: Date,
  unsubscribeUrl: (messageId: number) => string,
): Promise<Map<string, string>> {
  if (clicks.length === 0) return new Map();
  return db.transaction().execute(async (trx) => {
    const urls = await clickTargets(trx, kinds, clicks, unsubscribeUrl);
    const events = clicks.flatMap((c) => {
      const url = urls.get(clickKey(c));
      return url === undefined ? [] : [{ type: 'clicked' as const, id: c.messageId, link: c.linkId, url }];
    });
    if (events.length > 0) await record(trx, { kinds, now }, events);
    return urls;
  });
}

/** Counts the first unsubscribe made through a message; returns whether it counted. */
export async function recordUnsubscribe(trx: Db, kinds: MailKinds, messageId: number): Promise<boolean> {
  const [counted] = await record(trx, { kinds, now: new Date() }, [{ type: 'unsubscribed', id: messageId }]);
  return counted !== null;
}
