import { randomInt } from 'node:crypto';
import { isoMicros } from '../../util/time.js';
import { softDeleteOwned } from '../../db/soft-delete.js';
import type { Db } from '../../db/index.js';

export interface GroupValues {
  group_name: string;
  description: string;
  is_display: 0 | 1;
}

/** The account's live (not deleted) groups. */
export function selectGroups(db: Db, userId: number) {
  return db.selectFrom('unsubscribe_groups').selectAll().where('user_id', '=', userId).where('deleted_at', 'is', null);
}

/** The account's live groups with their recipients counted. */
export function selectGroupsWithCounts(db: Db, userId: number) {
  return db
    .selectFrom('unsubscribe_groups as g')
    .selectAll('g')
    .select((eb) =>
      eb
        .selectFrom('unsubscribers as u')
        .select((e) => e.fn.countAll<number>().as('n'))
        .whereRef('u.unsubscribe_groups_id', '=', 'g.id')
        .as('unsubscribe_clients_count'),
    )
    .where('g.user_id', '=', userId)
    .where('g.deleted_at', 'is', null);
}

/** One live group of the account, or undefined (unknown, another account's, or deleted). */
export function findUnsubscribeGroup(db: Db, userId: number, id: number) {
  return selectGroups(db, userId).where('id', '=', id).executeTakeFirst();
}

/** A group of the account, deleted or not (suppression and unsubscribes still honour deleted groups). */
export function findGroupAnyState(db: Db, userId: number, id: number) {
  return db.selectFrom('unsubscribe_groups').selectAll().where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
}

/** The account's live groups offered on the unsubscribe preferences page (`is_display` 1), oldest first. */
export function listDisplayGroups(db: Db, userId: number) {
  return selectGroups(db, userId).where('is_display', '=', 1).orderBy('id', 'asc').execute();
}

/** A random 12-digit numeric text: a group's `rand_id`, unique across accounts. */
function newRandId(): string {
  return String(randomInt(100_000_000_000, 1_000_000_000_000));
}

/**
 * Inserts a group with a fresh `rand_id`. The unique index decides collisions: a clash inserts
 * nothing (ON CONFLICT DO NOTHING) and the insert is retried with another value.
 */
export async function insertGroup(db: Db, userId: number, values: GroupValues, now: Date): Promise<number> {
  const at = isoMicros(now);
  for (let attempt = 0; attempt < 8; attempt++) {
    const row = await db
      .insertInto('unsubscribe_groups')
      .values({ user_id: userId, rand_id: newRandId(), ...values, created_at: at, updated_at: at })
      .onConflict((oc) => oc.column('rand_id').doNothing())
      .returning('id')
      .executeTakeFirst();
    if (row) return row.id;
  }
  throw new Error('could not draw a unique rand_id');
}

/** Updates a live group of the account; returns whether one was updated. */
export async function updateGroupRow(db: Db, userId: number, id: number, values: GroupValues, now: Date): Promise<boolean> {
  const res = await db
    .updateTable('unsubscribe_groups')
    .set({ ...values, updated_at: isoMicros(now) })
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Soft-deletes a live group of the account (its recipients stay); returns whether one was deleted. */
export async function softDeleteGroup(db: Db, userId: number, id: number, now: Date): Promise<boolean> {
  return (await softDeleteOwned(db, 'unsubscribe_groups', userId, [id], now)) > 0;
}
