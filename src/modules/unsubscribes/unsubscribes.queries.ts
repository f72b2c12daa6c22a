import type { ExpressionBuilder } from 'kysely';
import type { DB } from '../../db/types.js';
import type { Db } from '../../db/index.js';
import type { GroupKey } from '../../suppression/suppression.writes.js';

/**
 * Which list a query works on: `null` is the account's global unsubscribe list, a number is that
 * group's recipients. Global entries and group recipients share one table and these queries.
 */
export type { GroupKey };

/** Where-clause of a group key (`IS NULL` for the global list). */
export function inGroup(groupId: GroupKey) {
  return (eb: ExpressionBuilder<DB, 'unsubscribers'>) =>
    groupId === null ? eb('unsubscribe_groups_id', 'is', null) : eb('unsubscribe_groups_id', '=', groupId);
}

/** The entries of one list of the account. */
export function selectUnsubscribers(db: Db, userId: number, groupId: GroupKey) {
  return db.selectFrom('unsubscribers').selectAll().where('user_id', '=', userId).where(inGroup(groupId));
}

/**
 * Deletes the account's entries among `ids` on the global list (`global`) or on any of its live
 * groups (`groups`: a deleted group's recipients are out of reach). Returns how many.
 */
export async function deleteUnsubscribers(db: Db, userId: number, ids: number[], list: 'global' | 'groups'): Promise<number> {
  const res = await db
    .deleteFrom('unsubscribers')
    .where('user_id', '=', userId)
    .where('id', 'in', ids)
    .$if(list === 'global', (q) => q.where('unsubscribe_groups_id', 'is', null))
    .$if(list === 'groups', (q) =>
      q.where('unsubscribe_groups_id', 'in', (eb) =>
        eb.selectFrom('unsubscribe_groups').select('id').where('user_id', '=', userId).where('deleted_at', 'is', null),
      ),
    )
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}
