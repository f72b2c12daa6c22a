/** The `idempotency_keys` table: claiming a key, storing its answer, releasing it, and the bounded sweep of expired keys. */
import type { Database } from '../db/index.js';
import type { Clock } from '../util/clock.js';
import { isoMicros } from '../util/time.js';
import { AppError } from './errors.js';

/** How long an answer is kept (and replayed) after its key was first claimed. */
export const KEEP_MS = 24 * 60 * 60 * 1000;
/** A key still `running` this long after its claim belongs to a process that died: the next claim takes it over. */
export const ABANDONED_MS = 10 * 60 * 1000;
/** Every this many claims of a process, one bounded delete of expired and abandoned keys (no sweeper). */
const SWEEP_EVERY = 100;
const SWEEP_BATCH = 500;

export const KEY_IN_PROGRESS = 'A request with this Idempotency-Key is still in progress.';

/** A row found on the key when the claim met one. */
interface KeptAnswer {
  request_hash: string | null;
  status: number | null;
  headers: string | null;
  body: string | null;
}

type ClaimResult = { claimed: true } | { claimed: false; done: KeptAnswer };

export type KeyStore = ReturnType<typeof keyStore>;

/** The `idempotency_keys` queries, every one scoped by account. */
export function keyStore(database: Database, clock: Clock) {
  const { db } = database;
  let claims = 0;
  const later = (iso: string, ms: number) => isoMicros(new Date(new Date(iso).getTime() + ms));
  /**
   * Deletes the keys past their `expires_at` among the oldest rows (of any account): rows are
   * claimed in time order, so the expired ones gather at the lowest ids, and the look is bounded
   * (no index on `expires_at` to keep up at every write).
   */
  async function sweep(now: string): Promise<void> {
    const oldest = db.selectFrom('idempotency_keys').select(['id', 'expires_at']).orderBy('id').limit(SWEEP_BATCH).as('oldest');
    const expired = db.selectFrom(oldest).select('oldest.id').where('oldest.expires_at', '<=', now);
    await db.deleteFrom('idempotency_keys').where('id', 'in', expired).execute();
  }

  /**
   * Claims `key` for the account with one insert (the unique (user_id, key) constraint decides
   * between concurrent claims, across processes). A key already there is taken over when past
   * its `expires_at` (a conditional update: one of several takers wins); a running one is a 409;
   * a done one comes back to be replayed or refused.
   */
  async function claim(userId: number, key: string, fingerprint: string | null, now: string): Promise<ClaimResult> {
    if (++claims % SWEEP_EVERY === 0) await sweep(now);
    const expires = later(now, ABANDONED_MS);
    for (let attempt = 0; attempt < 3; attempt++) {
      const inserted = await db
        .insertInto('idempotency_keys')
        .values({ user_id: userId, key, request_hash: fingerprint, state: 'running', created_at: now, expires_at: expires })
        .onConflict((oc) => oc.columns(['user_id', 'key']).doNothing())
        .returning('id')
        .executeTakeFirst();
      if (inserted) return { claimed: true };
      const row = await db
        .selectFrom('idempotency_keys')
        .select(['id', 'state', 'request_hash', 'status', 'headers', 'body', 'expires_at'])
        .where('user_id', '=', userId)
        .where('key', '=', key)
        .executeTakeFirst();
      if (!row) continue; // deleted meanwhile (released or swept): claim again
      if (row.expires_at > now) {
        if (row.state === 'running') throw new AppError(409, KEY_IN_PROGRESS, { 'retry-after': '1' });
        return { claimed: false, done: row };
      }
      const taken = await db
        .updateTable('idempotency_keys')
        .set({ request_hash: fingerprint, state: 'running', status: null, headers: null, body: null, created_at: now, expires_at: expires })
        .where('id', '=', row.id)
        .where('expires_at', '=', row.expires_at)
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) === 1) return { claimed: true };
    }
    // Lost every race for the key: another request holds it now.
    throw new AppError(409, KEY_IN_PROGRESS, { 'retry-after': '1' });
  }

  /** Stores the answer of the claim made at `claimedAt` (if it still holds the key). */
  async function finish(
    userId: number,
    key: string,
    claimedAt: string,
    answer: { request_hash: string; status: number; headers: string; body: string },
  ): Promise<void> {
    const { request_hash: hash, status, headers, body } = answer;
    const expires = later(claimedAt, KEEP_MS);
    await db
      .updateTable('idempotency_keys')
      .set({ request_hash: hash, status, headers, body, state: 'done', expires_at: expires })
      .where('user_id', '=', userId)
      .where('key', '=', key)
      .where('created_at', '=', claimedAt)
      .where('state', '=', 'running')
      .execute();
  }

  /** Gives up the claim made at `claimedAt`: the next request with the key runs. */
  async function release(userId: number, key: string, claimedAt: string): Promise<void> {
    await db
      .deleteFrom('idempotency_keys')
      .where('user_id', '=', userId)
      .where('key', '=', key)
      .where('created_at', '=', claimedAt)
      .where('state', '=', 'running')
      .execute();
  }

  return { clock, claim, finish, release };
}
