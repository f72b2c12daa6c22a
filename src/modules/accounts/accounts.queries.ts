import type { CompiledQuery } from 'kysely';
import type { Database, Db } from '../../db/index.js';
import type { FindAccount, KeyedAccount } from '../../http/auth.js';
import { isoMicros } from '../../util/time.js';

/**
 * The lookup of an account by public key, with its query compiled once: auth runs it on every
 * request that is not remembered, and building and compiling a Kysely query costs more than the
 * indexed lookup itself. `app.ts` hands it to the auth hook.
 */
export function accountByPublicKey(database: Database): FindAccount {
  const query = database.db
    .selectFrom('accounts')
    .select(['id', 'secret_hash', 'disabled'])
    .where('public_key', '=', '')
    .compile() as CompiledQuery<KeyedAccount>;
  return async (publicKey) => (await database.read<KeyedAccount>({ ...query, parameters: [publicKey] }))[0];
}

/** Inserts an account with its public key and secret hash; returns its id. */
export async function insertAccount(db: Db, name: string, publicKey: string, secretHash: string, now: Date): Promise<number> {
  const at = isoMicros(now);
  const row = await db
    .insertInto('accounts')
    .values({ name, public_key: publicKey, secret_hash: secretHash, created_at: at, updated_at: at })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Replaces an account's keys; false when there is no such account. */
export async function updateAccountKeys(db: Db, userId: number, publicKey: string, secretHash: string, now: Date): Promise<boolean> {
  const res = await db
    .updateTable('accounts')
    .set({ public_key: publicKey, secret_hash: secretHash, updated_at: isoMicros(now) })
    .where('id', '=', userId)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Whether any account exists. */
export async function hasAnyAccount(db: Db): Promise<boolean> {
  return Boolean(await db.selectFrom('accounts').select('id').limit(1).executeTakeFirst());
}
