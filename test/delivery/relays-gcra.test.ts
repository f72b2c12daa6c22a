import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Database, Db } from '../../src/db/index.js';
import { cameLate, DELAYS_KEPT } from '../../src/delivery/relay-pacing.js';
import { ensureRelays, readRelays, spendRelayTurns, takeRelayTurn } from '../../src/delivery/relay-state.js';
import { freshDatabase } from '../helpers.js';

/**
 * The relay's turns, run by their real statements on the real database, on a controlled clock:
 * every statement is given the time (`at`) instead of reading the database's clock.
 */

/** The start of the controlled clock (epoch ms): any time works, one far from 0 checks the arithmetic. */
const T0 = 1_800_000_000_000;

/** A seeded generator in [0, 1) (mulberry32): the same "random" lateness on every run. */
function seeded(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `senders` workers that always have a message for the relay, for `ms` of controlled time. A
 * sender asks when its view says its turn has come, plus `late()` (a busy event loop); on a miss
 * (another sender took the turn) it reads the row and asks again when the new turn comes. Returns
 * the send times, in order.
 */
async function simulate(
  database: Database,
  name: string,
  opts: { rate: number; toleranceMs?: number; senders: number; ms: number; late: () => number },
): Promise<number[]> {
  const intervalMs = 1000 / opts.rate;
  const toleranceMs = opts.toleranceMs ?? intervalMs;
  // One transaction: thousands of statements without a commit (and a disk flush on PostgreSQL) each.
  return database.db.transaction().execute(async (db: Db) => {
    await ensureRelays(db, [name]);
    const wakeAt = Array.from({ length: opts.senders }, () => T0);
    const sent: number[] = [];
    for (;;) {
      const i = wakeAt.indexOf(Math.min(...wakeAt));
      const at = wakeAt[i];
      if (at >= T0 + opts.ms) return sent;
      const row = await takeRelayTurn(db, name, { intervalMs, toleranceMs, at });
      if (row) sent.push(at);
      const view = row ?? (await readRelays(db, [name], at))[0];
      wakeAt[i] = Math.max(at, view.next_at) + opts.late();
    }
  });
}

/** The most sends in any window [t, t + ms], both ends included. */
function most(times: number[], ms: number): number {
  let best = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i] - times[j] > ms) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

describe('the turns of a rate-limited relay (a tolerance of one interval)', () => {
  let database: Database;
  let drop: () => Promise<void>;

  before(async () => {
    ({ database, drop } = await freshDatabase());
  });
  after(async () => drop());

  it('sends the n-th message of a sender that is never late at (n − 1) / rate seconds', async () => {
    const times = await simulate(database, 'exact:25', { rate: 200, senders: 1, ms: 50, late: () => 0 });
    assert.deepEqual(
      times.map((t) => t - T0),
      [0, 5, 10, 15, 20, 25, 30, 35, 40, 45],
    );
  });

  it('refuses a message before its turn and while the relay is paused; a late one keeps the schedule, an idle relay banks nothing', async () => {
    const db = database.db;
    await ensureRelays(db, ['turns:25']);
    const take = (at: number) => takeRelayTurn(db, 'turns:25', { intervalMs: 50, toleranceMs: 50, at: T0 + at });
    assert.equal((await take(0))?.next_at, T0 + 50);
    assert.equal(await take(0), undefined, 'no second message at once');
    assert.equal(await take(49), undefined, 'the second turn is at 50 ms');
    assert.equal((await take(99))?.next_at, T0 + 100, '49 ms late: the next turn stays at 100 ms');
    assert.equal((await take(100))?.next_at, T0 + 150, 'right after');
    assert.equal((await take(200))?.next_at, T0 + 250, 'a whole interval late: the schedule starts again from it');
    await spendRelayTurns(db, 'turns:25', { intervalMs: 50, turns: 1, at: T0 + 210 });
    assert.equal(await take(250), undefined, 'the turn at 250 ms was spent');
    assert.equal((await take(300))?.next_at, T0 + 350);
    await db
      .updateTable('relays')
      .set({ paused_until: T0 + 1000 })
      .where('name', '=', 'turns:25')
      .execute();
    assert.equal(await take(999), undefined, 'paused');
    assert.equal((await take(1000))?.next_at, T0 + 1050);
  });

  for (const rate of [200, 20]) {
    it(`at rate=${rate}, two senders that wake up to an interval late: the rate is ${rate}/s, at most ${rate + 1} in any 1 s and ${3 * rate + 1} in any 3 s`, async () => {
      const random = seeded(rate);
      const ms = rate === 200 ? 5_000 : 20_000;
      const times = await simulate(database, `late:${rate}`, {
        rate,
        senders: 2,
        ms,
        // Up to 99% of an interval late.
        late: () => random() * 0.99 * (1000 / rate),
      });
      const seconds = ms / 1000;
      // Not 0.9 × rate: a late sender keeps its turn, so the count is the rate's own.
      assert.ok(times.length >= rate * seconds - 1 && times.length <= rate * seconds, `${times.length} in ${seconds} s`);
      assert.ok(times.every((t, i) => i === 0 || t >= times[i - 1]));
      assert.equal(most(times, 1000), rate + 1);
      assert.ok(most(times, 3000) <= 3 * rate + 1, `${most(times, 3000)} in 3 s`);
    });
  }

  it('without the tolerance, the same late senders lose turns: about three quarters of the rate at rate=200', async () => {
    const random = seeded(200);
    const times = await simulate(database, 'strict:25', {
      rate: 200,
      toleranceMs: 0,
      senders: 2,
      ms: 5_000,
      late: () => random() * 0.99 * 5,
    });
    assert.ok(times.length < 0.8 * 200 * 5, `${times.length} in 5 s`);
  });
});

describe('a message the relay accepted late', () => {
  it('is one more than an interval later than the quickest of the worker’s recent messages, however slow they all are', () => {
    const recent = Array.from({ length: DELAYS_KEPT }, (_, i) => 200 + (i % 5));
    assert.equal(cameLate([...recent], 250, 50), false, '50 ms after the quickest (200 ms)');
    assert.equal(cameLate([...recent], 251, 50), true);
    assert.equal(cameLate([...recent], 10, 50), false, 'quicker than all');
  });

  it('is compared with a delay of 0 until the worker has sent a few: its first messages open connections together', () => {
    const recent: number[] = [];
    assert.equal(cameLate(recent, 300, 50), true);
    assert.equal(cameLate(recent, 300, 50), true, 'a second one as slow also came late');
    assert.equal(cameLate(recent, 40, 50), false);
    for (let i = recent.length; i < DELAYS_KEPT; i++) cameLate(recent, 30, 50);
    assert.equal(recent.length, DELAYS_KEPT);
    assert.equal(cameLate(recent, 70, 50), false, 'compared with 30 ms now');
    assert.equal(cameLate(recent, 81, 50), true);
    assert.equal(recent.length, DELAYS_KEPT, 'only the last few are kept');
  });
});
