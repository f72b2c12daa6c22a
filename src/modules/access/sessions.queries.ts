import type { CompiledQuery } from 'kysely';
import type { Database, Db } from '../../db/index.js';
import type { SessionLookup, SessionRecord } from '../../http/auth.js';
import { isoMicros } from '../../util/time.js';

/**
 * How auth finds a session by id (with its person, account and the account's two-factor
 * requirement), marks it seen and ends it. The lookup is compiled once, as the key lookup is.
 */
export function sessionLookup(database: Database): SessionLookup {
  const query = database.db
    .selectFrom('sessions as s')
    .innerJoin('people as p', 'p.id', 's.person_id')
    .innerJoin('accounts as a', 'a.id', 's.user_id')
    .leftJoin('account_settings as st', 'st.user_id', 's.user_id')
    .select((eb) => [
      's.id',
      's.user_id',
      's.person_id',
      's.secret_hash',
      's.created_at',
      's.last_seen_at',
      's.expires_at',
      'p.email',
      'p.role',
      eb('p.two_factor_secret', 'is not', null).as('two_factor'),
      eb.fn.coalesce('st.require_two_factor', eb.lit(0)).as('require_two_factor'),
      'a.disabled',
    ])
    .where('s.id', '=', 0)
    .compile() as CompiledQuery<SessionRecord>;
  return {
    find: async (id) => (await database.read<SessionRecord>({ ...query, parameters: [id] }))[0],
    touch: async (id, now) => {
      await database.db
        .updateTable('sessions')
        .set({ last_seen_at: isoMicros(now) })
        .where('id', '=', id)
        .where('last_seen_at', '<=', isoMicros(new Date(now.getTime() - 60_000)))
        .execute();
    },
    end: async (id) => {
      await database.db.deleteFrom('sessions').where('id', '=', id).execute();
    },
  };
}

/** Starts a session of a person; returns its id. */
export async function insertSession(
  db: Db,
  userId: number,
  personId: number,
  secretHash: string,
  now: Date,
  expiresAt: Date,
): Promise<number> {
  const at = isoMicros(now);
  const row = await db
    .insertInto('sessions')
    .values({
      user_id: userId,
      person_id: personId,
      secret_hash: secretHash,
      created_at: at,
      last_seen_at: at,
      expires_at: isoMicros(expiresAt),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** A session by id (for sign-out and for the session a cookie names at sign-in). */
export function findSession(db: Db, id: number) {
  return db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Ends one session. */
export async function endSession(db: Db, id: number): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', id).execute();
}

/** Ends every session of a person but `keep` (the one that changed the password; null: all). */
export async function endPersonSessions(db: Db, personId: number, keep: number | null): Promise<void> {
  let q = db.deleteFrom('sessions').where('person_id', '=', personId);
  if (keep !== null) q = q.where('id', '<>', keep);
  await q.execute();
}

/** Deletes the sessions that ended by time before `now` (past their absolute or idle end). */
export async function deleteEndedSessions(db: Db, now: Date, idleMs: number): Promise<number> {
  const r = await db
    .deleteFrom('sessions')
    .where((eb) => eb.or([eb('expires_at', '<=', isoMicros(now)), eb('last_seen_at', '<=', isoMicros(new Date(now.getTime() - idleMs)))]))
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** The times of the latest `limit` failed sign-ins of an address from one client address, newest first. */
export async function latestFailures(db: Db, emailKey: string, ip: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('sign_in_failures')
    .select('created_at')
    .where('email_key', '=', emailKey)
    .where('ip', '=', ip)
    .orderBy('created_at', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => r.created_at);
}

/** How many failed sign-ins an address has had since `since`, from anywhere, and when the latest was. */
export async function failuresSince(db: Db, emailKey: string, since: Date): Promise<{ count: number; latest: string | null }> {
  const r = await db
    .selectFrom('sign_in_failures')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.max('created_at').as('latest')])
    .where('email_key', '=', emailKey)
    .where('created_at', '>=', isoMicros(since))
    .executeTakeFirst();
  return { count: Number(r?.n ?? 0), latest: r?.latest ? String(r.latest) : null };
}

/** Records a failed sign-in of an address from a client address. */
export async function insertFailure(db: Db, emailKey: string, ip: string, now: Date): Promise<void> {
  await db
    .insertInto('sign_in_failures')
    .values({ email_key: emailKey, ip, created_at: isoMicros(now) })
    .execute();
}

/** Forgets an address's failures: from one client address (it signed in there), or from all (null: its password was reset). */
export async function clearFailures(db: Db, emailKey: string, ip: string | null): Promise<void> {
  let q = db.deleteFrom('sign_in_failures').where('email_key', '=', emailKey);
  if (ip !== null) q = q.where('ip', '=', ip);
  await q.execute();
}

/** Deletes failures older than `before` (they count for nothing any more). */
export async function deleteFailuresBefore(db: Db, before: Date): Promise<number> {
  const r = await db.deleteFrom('sign_in_failures').where('created_at', '<', isoMicros(before)).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Whether the account keeps people without two-factor authentication out. */
export async function readRequireTwoFactor(db: Db, userId: number): Promise<number> {
  const row = await db.selectFrom('account_settings').select('require_two_factor').where('user_id', '=', userId).executeTakeFirst();
  return Number(row?.require_two_factor ?? 0);
}
