import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import { isoMicros } from '../../util/time.js';
import { heldBy, type QueueTable } from './table.js';

/**
 * Pushes the lease of every row of `queue` that `owner` holds to `now + leaseMs` (a long batch
 * keeps its rows). Returns how many.
 */
export async function renew(db: Db, queue: QueueTable, owner: string, now: Date, leaseMs: number): Promise<number> {
  const r = await sql`
    update ${sql.table(queue.table)}
    set ${sql.ref(queue.due)} = ${isoMicros(new Date(now.getTime() + leaseMs))}
    where ${heldBy(queue, owner)}`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}
