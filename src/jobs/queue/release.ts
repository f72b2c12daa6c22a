import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import { isoMicros } from '../../util/time.js';
import { heldBy, idIn, type QueueTable } from './table.js';

/**
 * Gives rows back to `queue`, waiting and due at once: what a runner claimed and never handed
 * over (a graceful stop, a batch cut short). Only rows `owner` still holds; returns how many.
 */
export async function release(db: Db, queue: QueueTable, owner: string, now: Date, ids: readonly number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const at = isoMicros(now);
  const r = await sql`
    update ${sql.table(queue.table)}
    set state = ${sql.lit(queue.waiting)}, ${sql.ref(queue.owner)} = null, ${sql.ref(queue.due)} = ${at}, updated_at = ${at}
    where ${idIn(ids)} and ${heldBy(queue, owner)}`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}
