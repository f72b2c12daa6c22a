import type { Db } from '../../db/index.js';
import { isoMicros } from '../../util/time.js';

/**
 * Inserts an account; returns its id. `publicKey` is that of its `Default` key: the column is an
 * identifier of the account only (keys live in `api_keys`).
 */
export async function insertAccount(db: Db, name: string, publicKey: string, now: Date): Promise<number> {
  const at = isoMicros(now);
  const row = await db
    .insertInto('accounts')
    .values({ name, public_key: publicKey, secret_hash: '', created_at: at, updated_at: at })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Sets the public key an account is known by (its new `Default` key's); false when there is no such account. */
export async function updateAccountPublicKey(db: Db, userId: number, publicKey: string, now: Date): Promise<boolean> {
  const res = await db
    .updateTable('accounts')
    .set({ public_key: publicKey, updated_at: isoMicros(now) })
    .where('id', '=', userId)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Whether any account exists. */
export async function hasAnyAccount(db: Db): Promise<boolean> {
  return Boolean(await db.selectFrom('accounts').select('id').limit(1).executeTakeFirst());
}
