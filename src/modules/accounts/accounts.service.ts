import type { Db } from '../../db/index.js';
import { hashSecret } from '../../util/secrets.js';
import { systemClock } from '../../util/clock.js';
import { newKeyPair } from './accounts.keys.js';
import { hasAnyAccount, insertAccount, updateAccountKeys } from './accounts.queries.js';

export interface IssuedKeys {
  user_id: number;
  public_key: string;
  secret_key: string;
}

/**
 * Creates an account and returns its keys; the secret is stored only as a hash. Accounts are made
 * outside any request (the CLI, the first start, test set-up), where no app clock exists yet: the
 * time defaults to the system clock, and a caller with a clock passes its time.
 */
export async function createAccount(db: Db, name: string, now: Date = systemClock.now()): Promise<IssuedKeys> {
  const { publicKey, secretKey } = newKeyPair();
  const id = await insertAccount(db, name, publicKey, hashSecret(secretKey), now);
  return { user_id: id, public_key: publicKey, secret_key: secretKey };
}

/**
 * Issues new keys for an account; the old ones stop working at once. Null when no such account.
 * Run from the CLI, outside the app: the time defaults to the system clock, as for `createAccount`.
 */
export async function rotateAccountKeys(db: Db, userId: number, now: Date = systemClock.now()): Promise<IssuedKeys | null> {
  const { publicKey, secretKey } = newKeyPair();
  const done = await updateAccountKeys(db, userId, publicKey, hashSecret(secretKey), now);
  return done ? { user_id: userId, public_key: publicKey, secret_key: secretKey } : null;
}

/** On the very first start with no account, creates one so a new user can call the API at once. */
export async function bootstrapAccount(db: Db): Promise<IssuedKeys | null> {
  return (await hasAnyAccount(db)) ? null : createAccount(db, 'Default account');
}
