import type { Db } from '../../db/index.js';

/** The account's suppressed addresses (select builder for the list source). */
export function selectSuppressions(db: Db, userId: number) {
  return db.selectFrom('bounced_addresses').select(['id', 'email', 'reason', 'detail', 'created_at']).where('user_id', '=', userId);
}

/**
 * Lifts the suppression of one address of the account and forgets its soft-bounce history (so
 * the next soft bounce starts a new count). Returns whether the address was suppressed.
 */
export async function deleteSuppression(db: Db, userId: number, emailKey: string): Promise<boolean> {
  const r = await db.deleteFrom('bounced_addresses').where('user_id', '=', userId).where('email_key', '=', emailKey).executeTakeFirst();
  if (Number(r.numDeletedRows) === 0) return false;
  await db.deleteFrom('soft_bounces').where('user_id', '=', userId).where('email_key', '=', emailKey).execute();
  return true;
}
