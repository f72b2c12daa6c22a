import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import { engineOf, lockSkippingLocked } from '../../db/dialect.js';
import { isoMicros } from '../../util/time.js';
import type { QueueTable } from './table.js';

/**
 * Claims up to `limit` due rows of `queue` for `owner`, oldest due first: due means waiting, or
 * claimed with a lease that ran out (its runner died or hung), with the due time passed, and
 * meeting the queue's own condition. Claiming sets the claimed state, the owner and the due time
 * to the end of the lease, all in one statement. On PostgreSQL the inner select skips rows another
 * runner is claiming at the same moment (`FOR UPDATE SKIP LOCKED`), so runners never wait on each
 * other nor take the same row; SQLite has one writer at a time and needs no lock. Returns the
 * claimed rows (`columns: 'id'`: their ids only) in the order of their ids.
 */
export async function claim<Row extends { id: number } = { id: number }>(
  db: Db,
  queue: QueueTable,
  owner: string,
  now: Date,
  limit: number,
  leaseMs: number,
  columns: '*' | 'id' = '*',
): Promise<Row[]> {
  const at = isoMicros(now);
  const leaseEnd = isoMicros(new Date(now.getTime() + leaseMs));
  const table = sql.table(queue.table);
  const due = sql.ref(queue.due);
  const also = queue.where ? sql`and ${queue.where}` : sql``;
  // The chosen ids are materialised first, so the locking select runs exactly once.
  const { rows } = await sql<Row>`
    with due as materialized (
      select id from ${table}
      where state in (${sql.lit(queue.waiting)}, ${sql.lit(queue.claimed)}) and ${due} <= ${at} ${also}
      order by ${due}, id
      limit ${limit}
      ${lockSkippingLocked(engineOf(db))}
    )
    update ${table}
    set state = ${sql.lit(queue.claimed)}, ${sql.ref(queue.owner)} = ${owner}, ${due} = ${leaseEnd}, updated_at = ${at}
    where id in (select id from due)
    returning ${columns === '*' ? sql`*` : sql`id`}`.execute(db);
  // The update returns rows in no particular order; ids follow the order of creation.
  return rows.map((r) => ({ ...r, id: Number(r.id) })).sort((a, b) => a.id - b.id);
}
