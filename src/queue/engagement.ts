/**
 * What happens to a message after it was queued, one function per event: delivered, bounced,
 * opened, unsubscribed through it, reported as spam. Each updates the message row and the statistics of what sent
 * it (the source its kind declares) in the caller's transaction, so an event and its counters
 * are stored together or not at all. Every producer of an event (the queue worker, the public
 * pages, bounce intake) goes through these doors, and only through them.
 */
import { sql } from 'kysely';
import type { Db } from '../db/index.js';
import type { QueuedMessage } from '../db/types.js';
import { isoMicros } from '../util/time.js';
import type { MailKinds, SourceCounter } from './queue.types.js';
import { recordSoftBounce, suppressAddress } from './bounced-addresses.js';

/** The columns of a message that events read: its kind, and what names its source. */
export type CountedMessage = Pick<QueuedMessage, 'id' | 'kind'> & Partial<QueuedMessage>;

/** A message as the public pages need it. */
export interface PublicMessage {
  id: number;
  user_id: number;
  kind: string;
  email: string;
  /** The unsubscribe group the message was sent under; null when it has none (global only). */
  groupId: number | null;
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

/**
 * Adds each message's delta to the counters of its source: one update per source row, in a fixed
 * order (so concurrent batches lock rows alike). Messages of kinds without statistics count nothing.
 */
async function addToSources(
  trx: Db,
  kinds: MailKinds,
  items: Array<{ message: CountedMessage; delta: Partial<Record<SourceCounter, number>> }>,
): Promise<void> {
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
    await sql`update ${sql.table(source.table)} set ${sql.join(sets)} where id = ${id}`.execute(trx);
  }
}

/** Messages the SMTP server accepted: each counts once in `delivered` of what sent it. */
export async function recordDelivered(trx: Db, kinds: MailKinds, messages: CountedMessage[]): Promise<void> {
  await addToSources(
    trx,
    kinds,
    messages.map((message) => ({ message, delta: { delivered: 1 } })),
  );
}

/** A bounce of one message: how it bounced and the server's words (kept as the suppression's detail). */
export interface MessageBounce {
  id: number;
  type: 'hard' | 'soft';
  detail: string | null;
}

/** A message an event counted on, with its address (the address's effects follow from it). */
export type EventMessage = CountedMessage & Pick<QueuedMessage, 'user_id' | 'email' | 'email_key'>;

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
 * soft-bounce history, and SOFT_THRESHOLD of them within 30 days suppress it. Returns the messages
 * that counted.
 */
export async function recordBounced(
  trx: Db,
  kinds: MailKinds,
  bounces: readonly MessageBounce[],
  opts: { now: Date; after: 'attempt' | 'accept' },
): Promise<EventMessage[]> {
  const at = isoMicros(opts.now);
  const counted: Array<{ message: EventMessage; delta: Partial<Record<SourceCounter, number>> }> = [];
  for (const b of bounces) {
    const message = await trx
      .updateTable('mail_messages')
      .set({ state: 'bounced', bounce_type: b.type, updated_at: at })
      .where('id', '=', b.id)
      .where('bounce_type', 'is', null)
      .where('state', '=', opts.after === 'accept' ? 'sent' : 'bounced')
      .returning(['id', 'kind', 'user_id', 'email', 'email_key', ...sourceKeys(kinds)])
      .executeTakeFirst();
    if (!message) continue;
    const delta: Partial<Record<SourceCounter, number>> = { bounces: 1, [`${b.type}_bounces`]: 1 };
    if (opts.after === 'accept') delta.delivered = -1;
    counted.push({ message, delta });
    if (b.type === 'hard') await suppressAddress(trx, message, 'hard_bounce', b.detail, opts.now);
    else await recordSoftBounce(trx, message, message.id, b.detail, opts.now);
  }
  await addToSources(trx, kinds, counted);
  return counted.map((c) => c.message);
}

/**
 * A spam complaint about a message: its `complained` flag goes 0 → 1 by a conditional update, and
 * only that change adds 1 to `spam_reports` of what sent it and puts its address on the account's
 * suppression list (reason `complaint`). A second complaint about the same message counts nothing.
 * (The caller also puts the address on the account's global unsubscribe list, in the same
 * transaction.) Returns the message when it counted, else undefined.
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
    .returning(['id', 'kind', 'user_id', 'email', 'email_key', ...sourceKeys(kinds)])
    .executeTakeFirst();
  if (!message) return undefined;
  await addToSources(trx, kinds, [{ message, delta: { spam_reports: 1 } }]);
  await suppressAddress(trx, message, 'complaint', opts.detail, opts.now);
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
 * one unique open. Ids of messages that no longer exist count nothing. At most MAX_OPENS_BATCH ids.
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
      .returning(['id', 'kind', ...sourceKeys(kinds)])
      .execute();
    await addToSources(
      trx,
      kinds,
      rows.map((message) => ({
        message,
        delta: { total_opens: hits.get(message.id)!, unique_opens: firsts.has(message.id) ? 1 : 0 },
      })),
    );
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
    .select(['id', 'user_id', 'kind', 'email', ...sourceKeys(kinds)])
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
  return { id: row.id, user_id: row.user_id, kind: row.kind, email: row.email, groupId: groupId === null ? null : Number(groupId) };
}
