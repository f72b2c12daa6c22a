import type { Kysely } from 'kysely';
import type { DB } from './types.js';
import { isoMicros } from '../util/time.js';

/** Tables whose rows are soft-deleted (`deleted_at`), each owned by an account (`user_id`). */
export type SoftDeletable = 'contacts' | 'contact_types' | 'senders' | 'unsubscribe_groups' | 'segments' | 'automations';

/**
 * Soft-deletes the account's live rows of `table` among `ids` (or every live row whose `column`
 * equals the value, with `by`) at `now`, the caller's clock time; returns how many were deleted.
 */
export async function softDeleteOwned(
  db: Kysely<DB>,
  table: SoftDeletable,
  userId: number,
  ids: number[],
  now: Date,
  by: { column: 'id' | 'contact_type_id' } = { column: 'id' },
): Promise<number> {
  if (ids.length === 0) return 0;
  const at = isoMicros(now);
  // One shape for six tables: Kysely cannot type a column set shared by a union of tables.
  const res = await (db as Kysely<any>)
    .updateTable(table)
    .set({ deleted_at: at, updated_at: at })
    .where('user_id', '=', userId)
    .where(by.column, 'in', ids)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}
