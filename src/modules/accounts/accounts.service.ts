import type { Config } from '../../config.js';
import type { Db } from '../../db/index.js';
import { inviteFirstOwner } from '../access/users.service.js';
import { hashSecret } from '../../util/secrets.js';
import { systemClock } from '../../util/clock.js';
import { newKeyPair } from '../access/keys.pair.js';
import { hasAnyAccount, insertAccount, updateAccountPublicKey } from './accounts.queries.js';
import { deleteAccountKeys, insertKey } from '../access/keys.queries.js';

export interface IssuedKeys {
  user_id: number;
  public_key: string;
  secret_key: string;
}

/** The name of the key an account is made with (and a rotation makes anew). */
export const DEFAULT_KEY_NAME = 'Default';

/** Runs `fn` in a transaction of its own, or in the caller's when `db` already is one. */
function inTransaction<T>(db: Db, fn: (trx: Db) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn);
}

/** Makes the account's `Default` key, with `full` scopes; the secret is stored only as a hash. */
async function issueDefaultKey(trx: Db, userId: number, publicKey: string, secretKey: string, now: Date): Promise<void> {
  await insertKey(
    trx,
    userId,
    { name: DEFAULT_KEY_NAME, publicKey, secretHash: hashSecret(secretKey), scopes: 'full', createdBy: null, rootPerson: null },
    now,
  );
}

/**
 * Creates an account with its `Default` key (`full` scopes) and returns the key pair; the secret
 * is stored only as a hash. Accounts are made outside any request (the CLI, the first start, test
 * set-up), where no app clock exists yet: the time defaults to the system clock, and a caller with
 * a clock passes its time.
 */
export async function createAccount(db: Db, name: string, now: Date = systemClock.now()): Promise<IssuedKeys> {
  const { publicKey, secretKey } = newKeyPair();
  const id = await inTransaction(db, async (trx) => {
    const userId = await insertAccount(trx, name, publicKey, now);
    await issueDefaultKey(trx, userId, publicKey, secretKey, now);
    return userId;
  });
  return { user_id: id, public_key: publicKey, secret_key: secretKey };
}

/**
 * The emergency measure of the command line: revokes every key of the account at once and issues a
 * new `Default` key with `full` scopes. Null when no such account. Run outside the app: the time
 * defaults to the system clock, as for `createAccount`.
 */
export async function rotateAccountKeys(db: Db, userId: number, now: Date = systemClock.now()): Promise<IssuedKeys | null> {
  const { publicKey, secretKey } = newKeyPair();
  const done = await inTransaction(db, async (trx) => {
    if (!(await updateAccountPublicKey(trx, userId, publicKey, now))) return false;
    await deleteAccountKeys(trx, userId);
    await issueDefaultKey(trx, userId, publicKey, secretKey, now);
    return true;
  });
  return done ? { user_id: userId, public_key: publicKey, secret_key: secretKey } : null;
}

/** An account's keys, and with a first owner the one-time link where they set their password. */
export type CreatedAccount = IssuedKeys & { owner_link?: string };

/**
 * Creates an account (`createAccount`) and, with `ownerEmail`, its first owner: a person invited as
 * `owner` whose one-time link (valid 7 days) to set a name and password is returned to be printed.
 * Both or neither: an address that already belongs to a person fails the whole.
 */
export async function createAccountWithOwner(
  db: Db,
  config: Config,
  name: string,
  ownerEmail: string | null,
  now: Date = systemClock.now(),
): Promise<CreatedAccount> {
  if (!ownerEmail) return createAccount(db, name, now);
  return inTransaction(db, async (trx) => {
    const keys = await createAccount(trx, name, now);
    return { ...keys, owner_link: await inviteFirstOwner(trx, config, keys.user_id, ownerEmail, now) };
  });
}

/**
 * On the very first start with no account, creates one so a new user can call the API at once,
 * with its first owner's link when `OWNER_EMAIL` is set.
 */
export async function bootstrapAccount(db: Db, config?: Config): Promise<CreatedAccount | null> {
  if (await hasAnyAccount(db)) return null;
  return config ? createAccountWithOwner(db, config, 'Default account', config.ownerEmail) : createAccount(db, 'Default account');
}
