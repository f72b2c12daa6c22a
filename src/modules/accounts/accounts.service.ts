import type { Db } from '../../db/index.js';
import { hashSecret } from '../../util/secrets.js';
import { newKeyPair } from './accounts.keys.js';
import { hasAnyAccount, insertAccount, updateAccountKeys } from './accounts.queries.js';

export interface IssuedKeys {
  user_id: number;
  public_key: string;
  secret_key: string;
}

/** Creates an account and returns its keys; the secret is stored only as a hash. */
export async function createAccount(db: Db, name: string): Promise<IssuedKeys> {
  const { publicKey, secretKey } = newKeyPair();
  const id = await insertAccount(db, name, publicKey, hashSecret(secretKey));
  return { user_id: id, public_key: publicKey, secret_key: secretKey };
}

/** Issues new keys for an account; the old ones stop working at once. Null when no such account. */
export async function rotateAccountKeys(db: Db, userId: number): Promise<IssuedKeys | null> {
  const { publicKey, secretKey } = newKeyPair();
  const done = await updateAccountKeys(db, userId, publicKey, hashSecret(secretKey));
  return done ? { user_id: userId, public_key: publicKey, secret_key: secretKey } : null;
}

/** On the very first start with no account, creates one so a new user can call the API at once. */
export async function bootstrapAccount(db: Db): Promise<IssuedKeys | null> {
  return (await hasAnyAccount(db)) ? null : createAccount(db, 'Default account');
}
