import type { Db } from '../../db/index.js';
import { hashSecret, newKeyPair } from '../../http/auth.js';
import { isoMicros } from '../../util/time.js';

export interface IssuedKeys {
  user_id: number;
  public_key: string;
  secret_key: string;
}

/** Creates an account and returns its keys; the secret is stored only as a hash. */
export async function createAccount(db: Db, name: string): Promise<IssuedKeys> {
  const { publicKey, secretKey } = newKeyPair();
  const now = isoMicros();
  const row = await db
    .insertInto('accounts')
    .values({ name, public_key: publicKey, secret_hash: hashSecret(secretKey), created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { user_id: row.id, public_key: publicKey, secret_key: secretKey };
}

/** Issues new keys for an account; the old ones stop working at once. Null when no such account. */
export async function rotateAccountKeys(db: Db, userId: number): Promise<IssuedKeys | null> {
  const { publicKey, secretKey } = newKeyPair();
  const res = await db
    .updateTable('accounts')
    .set({ public_key: publicKey, secret_hash: hashSecret(secretKey), updated_at: isoMicros() })
    .where('id', '=', userId)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1 ? { user_id: userId, public_key: publicKey, secret_key: secretKey } : null;
}

/** On the very first start with no account, creates one so a new user can call the API at once. */
export async function bootstrapAccount(db: Db): Promise<IssuedKeys | null> {
  const any = await db.selectFrom('accounts').select('id').limit(1).executeTakeFirst();
  return any ? null : createAccount(db, 'Default account');
}
