import { isoMicros } from '../../util/time.js';
import type { Db } from '../../db/index.js';

/** The account's notification recipients. */
export function selectNotificationRecipients(db: Db, userId: number) {
  return db.selectFrom('notification_recipients').selectAll().where('user_id', '=', userId);
}

/** Whether the account already has this address (case-insensitive). */
export async function hasNotificationRecipient(db: Db, userId: number, email: string): Promise<boolean> {
  const row = await db
    .selectFrom('notification_recipients')
    .select('id')
    .where('user_id', '=', userId)
    .where('email_key', '=', email.toLowerCase())
    .executeTakeFirst();
  return row !== undefined;
}

export async function insertNotificationRecipient(db: Db, userId: number, email: string, owner: string, now: Date): Promise<number> {
  const at = isoMicros(now);
  const row = await db
    .insertInto('notification_recipients')
    .values({ user_id: userId, email_address: email, email_key: email.toLowerCase(), email_owner: owner, created_at: at, updated_at: at })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Deletes the account's recipients among `ids`; returns how many went. */
export async function deleteNotificationRecipients(db: Db, userId: number, ids: number[]): Promise<number> {
  const res = await db.deleteFrom('notification_recipients').where('user_id', '=', userId).where('id', 'in', ids).executeTakeFirst();
  return Number(res.numDeletedRows);
}
