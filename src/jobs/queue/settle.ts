import type { UpdateQueryBuilder, UpdateResult } from 'kysely';
import type { Db } from '../../db/index.js';
import type { DB } from '../../db/types.js';
import { heldBy, idIn, type LeasedTable, type QueueTable } from './table.js';

/**
 * The update every mark of a leased queue is built on (sent, retried, bounced, delivered,
 * failed…): it touches only the rows among `ids` that `owner` still holds. A row whose lease ran
 * out and went to another runner is left alone, so only the lease holder settles. The caller sets
 * the new state and clears the owner on the builder returned (`.set({...})`), and reads what it
 * needs with `.returning(...)`; the rows returned are those it settled.
 */
export function settle<T extends LeasedTable>(
  db: Db,
  queue: QueueTable<T>,
  owner: string,
  ids: number | readonly number[],
): UpdateQueryBuilder<DB, T, T, UpdateResult> {
  // Kysely cannot resolve `updateTable` over a table that is still a type parameter; T is one table.
  const update = db.updateTable(queue.table as LeasedTable) as unknown as UpdateQueryBuilder<DB, T, T, UpdateResult>;
  return update.where(idIn(typeof ids === 'number' ? [ids] : ids)).where(heldBy(queue, owner));
}
