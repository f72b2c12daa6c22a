import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Database, Db } from '../../src/db/index.js';
import { cameLate, DELAYS_KEPT } from '../../src/delivery/relay-pacing.js';
import { ensureRelays, spendRelayTurns, takeRelayTurn } from '../../src/delivery/relay-state.js';
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
 * `senders` workers that always have a message for the relay, for `ms` of controlled time. Each
 * asks for a turn `late()` after the next turn it knows of (a busy event loop, a slow round trip),
 * and sends at its turn, or at once when the turn has passed. Returns the send times, in order.
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
    const askAt = Array.from({ length: opts.senders }, () => T0);
    const sent: number[] = [];
    for (;;) {
      const i = askAt.indexOf(Math.min(...askAt));
      const at = askAt[i];
      if (at >= T0 + opts.ms) return sent.filter((t) => t < T0 + opts.ms).sort((x, y) => x - y);
      const row = (await takeRelayTurn(db, name, { intervalMs, toleranceMs, at }))!;
      sent.push(Math.max(at, row.next_at - intervalMs));
      askAt[i] = Math.max(at, row.next_at) + opts.late();
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

  it('gives the next turn, keeps the schedule for a message up to an interval late, banks nothing while idle, skips spent turns and pauses', async () => {
    const db = database.db;
    await ensureRelays(db, ['turns:25']);
    const turn = async (at: number) => {
      const row = await takeRelayTurn(db, 'turns:25', { intervalMs: 50, toleranceMs: 50, at: T0 + at });
      return row && row.next_at - 50 - T0;
    };
    assert.equal(await turn(0), 0);
    assert.equal(await turn(0), 50, 'no second message at once: the next turn is 50 ms on');
    assert.equal(await turn(149), 100, '49 ms late: the turn at 100 ms is still this one');
    assert.equal(await turn(150), 150);
    assert.equal(await turn(300), 300, 'a whole interval late: the schedule starts again from now');
    assert.equal(await turn(300), 350);
    await spendRelayTurns(db, 'turns:25', { intervalMs: 50, turns: 1, at: T0 + 310 });
    assert.equal(await turn(310), 450, 'the turn at 400 ms was spent');
    await db
      .updateTable('relays')
      .set({ paused_until: T0 + 1000 })
      .where('name', '=', 'turns:25')
      .execute();
    assert.equal(await turn(999), undefined, 'paused');
    assert.equal(await turn(1000), 1000);
  });

  for (const rate of [200, 20]) {
    it(`at rate=${rate}, two senders that ask up to an interval late: the rate is ${rate}/s, at most ${rate + 1} in any 1 s and ${3 * rate + 1} in any 3 s`, async () => {
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

  it('without the tolerance, a sender that asks up to an interval late loses turns: about two thirds of the rate at rate=200', async () => {
    const random = seeded(200);
    const times = await simulate(database, 'strict:25', {
      rate: 200,
      toleranceMs: 0,
      senders: 1,
      ms: 5_000,
      late: () => random() * 0.99 * 5,
    });
    assert.ok(times.length < 0.75 * 200 * 5, `${times.length} in 5 s`);
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
