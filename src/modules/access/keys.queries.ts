import type { CompiledQuery } from 'kysely';
import type { Database, Db } from '../../db/index.js';
import type { KeyLookup, KeyRecord } from '../../http/auth.js';
import type { Actor } from '../../http/principal.js';
import { isoMicros } from '../../util/time.js';
import type { KeyRow } from './keys.schema.js';

/**
 * How auth finds a key by its public key and marks it used. The lookup is compiled once: auth runs
 * it on every request it does not remember, and building a Kysely query costs more than the
 * indexed lookup itself.
 */
export function keyLookup(database: Database): KeyLookup {
  const query = database.db
    .selectFrom('api_keys as k')
    .innerJoin('accounts as a', 'a.id', 'k.user_id')
    .leftJoin('people as p', (j) => j.onRef('p.id', '=', 'k.root_person_id').onRef('p.user_id', '=', 'k.user_id'))
    .select([
      'k.id',
      'k.user_id',
      'k.name',
      'k.secret_hash',
      'k.scopes',
      'k.last_used_at',
      'a.disabled',
      'k.root_person_id',
      'p.role as root_role',
    ])
    .where('k.public_key', '=', '')
    .compile() as CompiledQuery<KeyRecord>;
  return {
    find: async (publicKey) => (await database.read<KeyRecord>({ ...query, parameters: [publicKey] }))[0],
    touch: async (id, now) => {
      const at = isoMicros(now);
      const minuteAgo = isoMicros(new Date(now.getTime() - 60_000));
      await database.db
        .updateTable('api_keys')
        .set({ last_used_at: at })
        .where('id', '=', id)
        .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', minuteAgo)]))
        .execute();
    },
  };
}

/** What a new key is made of. */
export interface NewKey {
  name: string;
  publicKey: string;
  secretHash: string;
  scopes: string;
  createdBy: Actor | null;
  /** The person at the start of the maker's chain (the maker's own `rootPerson`); null for the command line. */
  rootPerson: number | null;
}

/** Inserts a key of the account; returns its id. */
export async function insertKey(db: Db, userId: number, key: NewKey, now: Date): Promise<number> {
  const at = isoMicros(now);
  const row = await db
    .insertInto('api_keys')
    .values({
      user_id: userId,
      name: key.name,
      public_key: key.publicKey,
      secret_hash: key.secretHash,
      scopes: key.scopes,
      created_by_type: key.createdBy?.type ?? null,
      created_by_id: key.createdBy?.id ?? null,
      created_by_name: key.createdBy?.name ?? null,
      root_person_id: key.rootPerson,
      created_at: at,
      updated_at: at,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** The account's keys with id below `beforeId` (all when null), newest first. */
export function keysBefore(db: Db, userId: number, beforeId: number | null, limit: number): Promise<KeyRow[]> {
  let q = db.selectFrom('api_keys').selectAll().where('user_id', '=', userId);
  if (beforeId !== null) q = q.where('id', '<', beforeId);
  return q.orderBy('id', 'desc').limit(limit).execute();
}

/** A page of the account's keys, newest first. */
export function keysPage(db: Db, userId: number, offset: number, limit: number): Promise<KeyRow[]> {
  return db.selectFrom('api_keys').selectAll().where('user_id', '=', userId).orderBy('id', 'desc').offset(offset).limit(limit).execute();
}

/** How many keys the account has. */
export async function countKeys(db: Db, userId: number): Promise<number> {
  const r = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

/** One key of the account, or undefined. */
export function findKey(db: Db, userId: number, id: number): Promise<KeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
}

/** Changes a key's name and scopes. */
export async function updateKeyRow(db: Db, userId: number, id: number, set: { name: string; scopes: string }, now: Date): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ ...set, updated_at: isoMicros(now) })
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .execute();
}

/** Deletes a key of the account; false when there was none. */
export async function deleteKeyRow(db: Db, userId: number, id: number): Promise<boolean> {
  const r = await db.deleteFrom('api_keys').where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) === 1;
}

/** Deletes every key of the account (a rotation replaces them all). */
export async function deleteAccountKeys(db: Db, userId: number): Promise<void> {
  await db.deleteFrom('api_keys').where('user_id', '=', userId).execute();
}
