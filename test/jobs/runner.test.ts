import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, beforeEach, describe, it } from 'node:test';
import Fastify from 'fastify';
import { sql } from 'kysely';
import type { Database } from '../../src/db/index.js';
import { startRunner, type Lane, type Runner, type RunnerOptions, type WorkContext } from '../../src/jobs/runner.js';
import { testClock } from '../../src/util/clock.js';
import { ENGINE, freshDatabase } from '../helpers.js';

/** A real logger writing JSON lines into memory. */
function capturingLogger() {
  const lines: Array<Record<string, any>> = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: Fastify({ logger: { level: 'info', stream } }).log, lines };
}

/** A promise and the function that resolves it. */
function signal<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** `promise`, or a failure naming `what` after `ms` of real time (the guard of a wait that must end). */
async function within<T>(promise: Promise<T>, what: string, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

interface TinyLane extends Lane {
  ticks: number;
  renewals: number;
  flushes: number;
  idles: number;
  closed: boolean;
  /** Resolved at the first idle wait's due-time question. */
  idle: Promise<void>;
}

describe('the job runner drives a lane on a real database', () => {
  let database: Database;
  let drop: () => Promise<void>;
  const clock = testClock('2030-01-01T00:00:00.000Z');
  const quiet = capturingLogger().log;
  let runner: Runner | null = null;

  before(async () => {
    ({ database, drop } = await freshDatabase());
    await sql`create table lane_items (id integer primary key, state text not null, owner text)`.execute(database.db);
  });
  after(() => drop());
  beforeEach(async () => {
    await runner?.stop();
    runner = null;
    await sql`delete from lane_items`.execute(database.db);
  });

  const insert = async (...ids: number[]) => {
    for (const id of ids) await sql`insert into lane_items (id, state, owner) values (${id}, 'queued', null)`.execute(database.db);
  };
  const rows = async () =>
    (
      await sql<{ id: number; state: string; owner: string | null }>`select id, state, owner from lane_items order by id`.execute(
        database.db,
      )
    ).rows.map((r) => `${r.id}:${r.state}:${r.owner === null ? '-' : r.owner === runner?.id ? 'me' : r.owner}`);
  const settle = (id: number) => sql`update lane_items set state = 'done', owner = null where id = ${id}`.execute(database.db);

  /** A lane over `lane_items`: claims up to `batch` queued rows; its work is the test's. */
  function tinyLane(
    work: (ids: number[], ctx: WorkContext) => Promise<void>,
    opts: { name?: string; channel?: string | null; batch?: number } = {},
  ): TinyLane {
    const idle = signal();
    const lane: TinyLane = {
      name: opts.name ?? 'tiny',
      channel: opts.channel ?? null,
      ticks: 0,
      renewals: 0,
      flushes: 0,
      idles: 0,
      closed: false,
      idle: idle.promise,
      leases: {
        claim: async (owner) => {
          lane.ticks++;
          const r = await sql<{ id: number }>`
            update lane_items set state = 'held', owner = ${owner}
            where id in (select id from lane_items where state = 'queued' order by id limit ${opts.batch ?? 10})
            returning id`.execute(database.db);
          return r.rows.map((x) => ({ id: Number(x.id) })).sort((a, b) => a.id - b.id);
        },
        renew: async () => {
          lane.renewals++;
        },
        release: (owner, _now, ids) =>
          sql`update lane_items set state = 'queued', owner = null where owner = ${owner} and state = 'held' and id in (${sql.join(ids)})`.execute(
            database.db,
          ),
      },
      work: (items, ctx) =>
        work(
          items.map((i) => i.id),
          ctx,
        ),
      flush: async () => {
        lane.flushes++;
      },
      whenIdle: async () => {
        lane.idles++;
      },
      nextDueAt: async () => {
        idle.resolve();
        return null;
      },
      close: () => {
        lane.closed = true;
      },
    };
    return lane;
  }

  const start = (lanes: Lane[], opts: RunnerOptions = {}, log = quiet) => (runner = startRunner({ database, clock, log }, lanes, opts));

  it('claims a batch, works it, releases what was not handed over, and idles when nothing is due', async () => {
    await insert(1, 2, 3, 4, 5);
    const lane = tinyLane(
      async (ids, ctx) => {
        // The first two are settled; the third is given back untouched.
        for (const id of ids.slice(0, 2)) {
          await settle(id);
          ctx.handedOver(id);
        }
      },
      { batch: 3 },
    );
    const r = start([lane], { loop: false });
    assert.equal(await r.tick(), 3);
    assert.deepEqual(await rows(), ['1:done:-', '2:done:-', '3:queued:-', '4:queued:-', '5:queued:-']);
    assert.equal(lane.flushes, 1, 'the outcomes are written before the release');
    assert.equal(await r.lane('tiny').tick(), 3);
    assert.deepEqual(await rows(), ['1:done:-', '2:done:-', '3:done:-', '4:done:-', '5:queued:-']);
    assert.equal(await r.tick(), 1);
    assert.equal(await r.tick(), 0);
    assert.equal(lane.idles, 1, 'a tick that claims nothing does the lane’s housekeeping');
    assert.throws(() => r.lane('none'), /no lane named none/);
  });

  it('renews the leases while a lane works, and runs a lane without leases as a round that counts its work', async () => {
    await insert(1);
    const renewed = signal();
    const lane = tinyLane(async (ids, ctx) => {
      await within(renewed.promise, 'two renewals');
      await settle(ids[0]);
      ctx.handedOver(ids[0]);
    });
    const renew = lane.leases!.renew;
    lane.leases!.renew = async (...args) => {
      await renew(...args);
      if (lane.renewals >= 2) renewed.resolve();
    };
    let rounds = 0;
    const plain: Lane = { name: 'plain', channel: null, work: async () => ++rounds, nextDueAt: async () => null };
    const r = start([lane, plain], { loop: false, leaseMs: 60, tickOrder: ['plain', 'tiny', 'plain'] });
    assert.equal(await r.tick(), 1, 'only the claimed items are counted');
    assert.ok(lane.renewals >= 2);
    assert.equal(rounds, 2);
    assert.equal(await r.lane('plain').tick(), 3);
  });

  it(`wakes an idle lane (${ENGINE === 'postgres' ? 'a NOTIFY through the listener' : 'a nudge from a lane of its channel'})`, async () => {
    const listener = database.listener;
    for (let i = 0; i < 100 && listener && !listener.isListening(); i++) await new Promise((r) => setTimeout(r, 20));
    const done = signal();
    const work = async (ids: number[], ctx: WorkContext) => {
      for (const id of ids) {
        await settle(id);
        ctx.handedOver(id);
      }
      done.resolve();
    };
    // No poll could find the item in time: only a wake-up does.
    const slow = { pollMs: 60_000, idleMaxMs: 60_000 };
    if (ENGINE === 'postgres') {
      const lane = tinyLane(work, { channel: 'runner_test' });
      start([lane], slow);
      await within(lane.idle, 'idle');
      // The lane's channel is subscribed once the listener LISTENs on every channel again.
      for (let i = 0; i < 100 && !listener!.isListening(); i++) await new Promise((r) => setTimeout(r, 20));
      await insert(1);
      await sql`select pg_notify('runner_test', '')`.execute(database.db);
    } else {
      await insert(1);
      // The idle lane of the channel ticks again once its sibling did work.
      const sibling = tinyLane(async () => undefined, { name: 'sibling', channel: 'shared', batch: 0 });
      const worker = tinyLane(work, { channel: 'shared' });
      start([sibling, worker], slow);
      await within(done.promise, 'the item worked');
      for (let i = 0; i < 250 && sibling.ticks < 2; i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(sibling.ticks, 2);
    }
    await within(done.promise, 'the item worked');
    assert.deepEqual(await rows(), ['1:done:-']);
  });

  it('pauses after a failed tick, longer after each failure in a row, then goes on', async () => {
    await insert(1);
    const { log, lines } = capturingLogger();
    const done = signal();
    const at: number[] = [];
    const lane = tinyLane(async (ids, ctx) => {
      await settle(ids[0]);
      ctx.handedOver(ids[0]);
      done.resolve();
    });
    const claim = lane.leases!.claim;
    lane.leases!.claim = async (...args) => {
      at.push(performance.now());
      if (at.length <= 3) throw new Error(`database away (${at.length})`);
      return claim(...args);
    };
    start([lane], { pollMs: 40, idleMaxMs: 60_000 }, log);
    await within(done.promise, 'the item worked after the failures');
    const failed = lines.filter((l) => l.msg === 'tiny lane: tick failed; trying again after a pause');
    assert.deepEqual(
      failed.map((l) => [l.failures, l.pauseMs, l.err.message]),
      [
        [1, 40, 'database away (1)'],
        [2, 80, 'database away (2)'],
        [3, 160, 'database away (3)'],
      ],
    );
    const gaps = at.slice(1).map((t, i) => t - at[i]);
    // A timer never fires early (by more than a millisecond's rounding).
    gaps.forEach((gap, i) => assert.ok(gap >= 40 * 2 ** i - 2, `pause ${i + 1}: ${gap} ms`));
    assert.deepEqual(await rows(), ['1:done:-']);
  });

  it('stops gracefully: the work under way ends, the outcomes are written, what was not handed over goes back', async () => {
    await insert(1, 2, 3, 4);
    const first = signal();
    const lane = tinyLane(async (ids, ctx) => {
      await settle(ids[0]);
      ctx.handedOver(ids[0]);
      first.resolve();
      // The rest wait for something the stop ends (a relay's slot).
      await new Promise((r) => ctx.signal.addEventListener('abort', r));
      assert.ok(ctx.stopping());
    });
    const r = start([lane], { loop: false });
    const ticking = r.tick();
    await first.promise;
    await r.stop();
    assert.equal(await ticking, 4);
    assert.deepEqual(await rows(), ['1:done:-', '2:queued:-', '3:queued:-', '4:queued:-']);
    assert.ok(lane.flushes >= 1);
    assert.ok(lane.closed);
    assert.equal(await r.tick(), 0, 'a stopped runner claims nothing');
  });

  it('bounds the wait of a stop: an item handed over keeps its lease, the rest are released', async () => {
    await insert(1, 2, 3);
    const first = signal();
    const lane = tinyLane(async (ids, ctx) => {
      ctx.handedOver(ids[0]);
      first.resolve();
      await new Promise(() => undefined);
    });
    const r = start([lane], { loop: false, stopTimeoutMs: 50 });
    void r.tick();
    await first.promise;
    await within(r.stop(), 'the stop');
    assert.deepEqual(await rows(), ['1:held:me', '2:queued:-', '3:queued:-']);
    assert.ok(lane.closed);
  });
});
