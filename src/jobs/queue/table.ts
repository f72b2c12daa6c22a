/**
 * A leased queue is a table whose rows wait for a due time, are claimed by one runner for a lease
 * (renewed while it works), and are settled by that runner alone: graphile-worker's jobs table,
 * kept per kind of work. The SQL of each operation is a file beside this one (claim, renew,
 * release, settle), written once for every such table; a table is described by a `QueueTable`.
 */
import { sql, type RawBuilder } from 'kysely';
import type { DB } from '../../db/types.js';

/** The columns every leased table has. */
type LeaseColumns = 'id' | 'state' | 'lease_owner' | 'next_attempt_at' | 'updated_at';

/** The tables that can be a leased queue: those with the lease columns. */
export type LeasedTable = { [K in keyof DB]: LeaseColumns extends keyof DB[K] ? K : never }[keyof DB];

/** What the queue's SQL needs to know of a table. */
export interface QueueTable<T extends LeasedTable = LeasedTable> {
  readonly table: T;
  /** The state of a row waiting for its due time (`queued`, `pending`). */
  readonly waiting: string;
  /** The state of a claimed row. */
  readonly claimed: 'sending';
  /** The column naming the runner that holds a claimed row. */
  readonly owner: 'lease_owner';
  /** The column of the due time; while the row is claimed, the end of its lease. */
  readonly due: 'next_attempt_at';
  /** What else a due row must meet to be claimed (say, its endpoint is enabled), written against the table's own name. */
  readonly where?: RawBuilder<boolean>;
}

/**
 * The guard of every write to a claimed row: it is still claimed, by `owner`. A lease that ran out
 * and went to another runner fails it, so a late runner changes nothing.
 */
export function heldBy(queue: QueueTable, owner: string): RawBuilder<boolean> {
  // The states are literals, not parameters: the partial indexes over them stay usable.
  return sql<boolean>`state = ${sql.lit(queue.claimed)} and ${sql.ref(queue.owner)} = ${owner}`;
}

/** `id in (…)` over `ids`; an empty list matches nothing (an empty `in ()` is not valid on PostgreSQL). */
export function idIn(ids: readonly number[]): RawBuilder<boolean> {
  return ids.length === 0 ? sql<boolean>`1 = 0` : sql<boolean>`id in (${sql.join(ids)})`;
}
