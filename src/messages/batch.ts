/**
 * Small helpers the ledger's guarded updates share: the lock order of a batch's ids, how many
 * times each id occurs, and per-row values written in one statement (`case id when …`).
 */
import { sql, type RawBuilder } from 'kysely';

/** The ids, ascending: the lock order of every guarded update. */
export const ascending = (ids: Iterable<number>) => [...ids].sort((a, b) => a - b);

/** How many times each key occurs. */
export function tally(keys: readonly number[]): Map<number, number> {
  const n = new Map<number, number>();
  for (const k of keys) n.set(k, (n.get(k) ?? 0) + 1);
  return n;
}

/** `case id when … then n … else 0 end` over `counts` (typed, so PostgreSQL can plan it). */
export function caseOf(counts: ReadonlyMap<number, number>): RawBuilder<number> {
  if (counts.size === 0) return sql<number>`0`;
  return sql<number>`case ${sql.ref('id')} ${sql.join(
    [...counts].map(([id, n]) => sql`when ${id} then cast(${n} as integer)`),
    sql` `,
  )} else 0 end`;
}

/** `case id when … then <text or null> … else <column> end`: the rows of `values` get theirs, the others keep `column`. */
export function caseText(column: string, values: ReadonlyMap<number, string | null>): RawBuilder<string | null> {
  if (values.size === 0) return sql<string | null>`${sql.ref(column)}`;
  return sql<string | null>`case ${sql.ref('id')} ${sql.join(
    [...values].map(([id, v]) => sql`when ${id} then cast(${v} as text)`),
    sql` `,
  )} else ${sql.ref(column)} end`;
}
