import type { Insertable, Updateable } from 'kysely';
import type { Db } from '../../db/index.js';
import type { DesignTable } from '../../db/types.js';
import { isoMicros } from '../../util/time.js';

/** The account's designs. */
export function selectDesigns(db: Db, userId: number) {
  return db.selectFrom('designs').selectAll().where('user_id', '=', userId);
}

/** One design of the account. */
export function findDesign(db: Db, userId: number, id: number) {
  return selectDesigns(db, userId).where('id', '=', id).executeTakeFirst();
}

export async function insertDesign(db: Db, values: Omit<Insertable<DesignTable>, 'created_at' | 'updated_at'>, now: Date): Promise<number> {
  const at = isoMicros(now);
  const row = await db
    .insertInto('designs')
    .values({ ...values, created_at: at, updated_at: at })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Changes a design of the account; false when there was none. */
export async function updateDesignRow(db: Db, userId: number, id: number, values: Updateable<DesignTable>, now: Date): Promise<boolean> {
  const res = await db
    .updateTable('designs')
    .set({ ...values, updated_at: isoMicros(now) })
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Deletes a design of the account; false when there was none. */
export async function deleteDesign(db: Db, userId: number, id: number): Promise<boolean> {
  const res = await db.deleteFrom('designs').where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}
