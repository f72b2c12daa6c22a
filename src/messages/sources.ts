/**
 * What sent a message and keeps its statistics (its kind's source, e.g. a single send's row): the
 * message columns that name it, its counters, and its hours in `engagement_hours` (the statistics'
 * timeline). The ledger's pipeline adds each batch's summed deltas here, one statement per source
 * row and one per source and hour, always in a fixed order, so concurrent transactions lock the
 * rows alike. Messages of kinds without a source (the service's own mail, test sends) count nothing.
 */
import { sql } from 'kysely';
import type { Db } from '../db/index.js';
import type { QueuedMessage } from '../db/types.js';
import type { MailKinds, SourceCounter } from './messages.kinds.js';

/** The columns of a message that counting reads: its kind, and what names its source. */
export type CountedMessage = Pick<QueuedMessage, 'id' | 'kind'> & Partial<QueuedMessage>;

/** The message columns every transition returns for the outgoing events (with `sourceKeys`). */
export const EVENT_COLUMNS = ['id', 'kind', 'user_id', 'email', 'email_key', 'contact_id', 'message_id'] as const;

/** A message an event counted on, with its address (the address's effects follow from it) and what its webhook event says. */
export type EventMessage = CountedMessage & Pick<QueuedMessage, 'user_id' | 'email' | 'email_key' | 'contact_id' | 'message_id'>;

/** What an event adds to (or, negative, takes from) the counters of its source. */
export type CounterDeltas = Partial<Record<SourceCounter, number>>;

/** What an event adds to its source's hour. */
export type HourCounter = 'delivered' | 'opens' | 'clicks';

/** What an event adds to one hour of its source's timeline. */
export type HourDeltas = Partial<Record<HourCounter, number>>;

/** The message columns that name a source, over every kind: what a counted row must carry. */
export function sourceKeys(kinds: MailKinds): Array<keyof QueuedMessage & string> {
  return [...new Set([...kinds.values()].flatMap((k) => (k.source ? [k.source.key] : [])))];
}

/** The columns a transition's guarded update returns: `EVENT_COLUMNS` and the source keys. */
export function eventColumns(kinds: MailKinds): Array<keyof QueuedMessage & string> {
  return [...EVENT_COLUMNS, ...sourceKeys(kinds)];
}

/** The id of the source row a message names, or null (a kind without statistics, or none named). */
export function sourceIdOf(kinds: MailKinds, message: CountedMessage): number | null {
  const source = kinds.get(message.kind)?.source;
  const id = source ? message[source.key] : null;
  return typeof id === 'number' ? id : id == null ? null : Number(id);
}

/** The key of a message's source in the maps of the pipeline: `<kind>:<source id>`, or null when it has none. */
export function sourceKeyOf(kinds: MailKinds, message: CountedMessage): string | null {
  const id = sourceIdOf(kinds, message);
  return id === null ? null : `${message.kind}:${id}`;
}

/** The UTC hour of a time, as the timeline names it: `YYYY-MM-DD HH:00:00`. */
export function hourOf(at: Date): string {
  return `${at.toISOString().slice(0, 13).replace('T', ' ')}:00:00`;
}

/**
 * Adds each message's deltas to the counters of its source: one update per source row, in a fixed
 * order (by `sourceKeyOf`). Returns the utr of each source row it updated, by `sourceKeyOf`, read
 * by the same statements; a row whose deltas sum to nothing is neither updated nor read.
 */
export async function addToSources(
  trx: Db,
  kinds: MailKinds,
  items: ReadonlyArray<{ message: CountedMessage; counters: CounterDeltas }>,
): Promise<Map<string, string>> {
  const utrs = new Map<string, string>();
  const per = new Map<string, { kind: string; id: number; delta: CounterDeltas }>();
  for (const { message, counters } of items) {
    const id = sourceIdOf(kinds, message);
    if (id === null) continue;
    const key = `${message.kind}:${id}`;
    const entry = per.get(key) ?? { kind: message.kind, id, delta: {} };
    for (const [counter, n] of Object.entries(counters) as Array<[SourceCounter, number]>)
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

/**
 * Adds each message's deltas to its source's row of `engagement_hours` for the item's `hour`
 * (`hourOf`): one upsert per source and hour, in a fixed order. Sums of zero write nothing.
 */
export async function addToHours(
  trx: Db,
  kinds: MailKinds,
  items: ReadonlyArray<{ message: CountedMessage; hour: string; delta: HourDeltas }>,
): Promise<void> {
  const per = new Map<string, { table: string; id: number; hour: string; delivered: number; opens: number; clicks: number }>();
  for (const { message, hour, delta } of items) {
    const id = sourceIdOf(kinds, message);
    if (id === null) continue;
    const table = kinds.get(message.kind)!.source!.table;
    const key = `${table}:${id}:${hour}`;
    const entry = per.get(key) ?? { table, id, hour, delivered: 0, opens: 0, clicks: 0 };
    entry.delivered += delta.delivered ?? 0;
    entry.opens += delta.opens ?? 0;
    entry.clicks += delta.clicks ?? 0;
    per.set(key, entry);
  }
  for (const key of [...per.keys()].sort()) {
    const e = per.get(key)!;
    if (e.delivered === 0 && e.opens === 0 && e.clicks === 0) continue;
    await sql`
      insert into engagement_hours (source_table, source_id, hour, delivered, opens, clicks)
      values (${e.table}, ${e.id}, ${e.hour}, ${e.delivered}, ${e.opens}, ${e.clicks})
      on conflict (source_table, source_id, hour) do update set
        delivered = engagement_hours.delivered + excluded.delivered,
        opens = engagement_hours.opens + excluded.opens,
        clicks = engagement_hours.clicks + excluded.clicks`.execute(trx);
  }
}
