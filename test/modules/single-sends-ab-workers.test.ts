import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { createDb, type Database } from '../../src/db/index.js';
import { Conflict } from '../../src/http/errors.js';
import { startJobs, type Jobs } from '../../src/lanes.js';
import { pickAbWinner } from '../../src/modules/single-sends/single-sends.service.js';
import { ENGINE } from '../helpers.js';
import { addEndpoint, eventsSince, lastEventId } from '../events/events.helpers.js';
import { abForm, audience, exactlyOnce } from './single-sends-ab.helpers.js';
import { createSend, group, sendRow, setupSends, verifiedSender, type SendsContext } from './single-sends.helpers.js';

const HOUR = 3600_000;

describe('single sends: two workers on PostgreSQL share an A/B test', { skip: ENGINE !== 'postgres' && 'PostgreSQL only' }, () => {
  let t: SendsContext;
  let other: Database;
  let base: { sender: number; group: number };
  let workers: Jobs[];

  before(async () => {
    t = await setupSends({ sink: true });
    // The second worker has its own connections to the same database, as another process would.
    const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(t.database.db);
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `/${rows[0].name}`;
    other = createDb(url.toString());
    const lanes = ['scheduler', 'mail'] as const;
    const mail = { batchSize: 20 };
    workers = [
      startJobs(t.deps, { id: 'worker-1', lanes, mail, loop: false }),
      startJobs({ ...t.deps, database: other }, { id: 'worker-2', lanes, mail, loop: false }),
    ];
    base = { sender: await verifiedSender(t, t.a), group: await group(t.a) };
    await addEndpoint(t.database, t.a.keys!.user_id, { events: ['single_send.ab_winner'] });
  });
  after(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await other.close();
    await t.close();
  });

  /** Both workers tick side by side until neither claims anything. */
  async function runBoth(): Promise<number[]> {
    const claimed = [0, 0];
    for (;;) {
      const n = await Promise.all(workers.map((w) => w.tick()));
      n.forEach((x, i) => (claimed[i] += x));
      if (n.every((x) => x === 0)) return claimed;
    }
  }

  test('the share and the winner each go once to each recipient; the winner is chosen once', async (ctx) => {
    const since = await lastEventId(t.database);
    const { type, emails } = await audience(t, 'pair', 400);
    const utr = await createSend(t.a, abForm({ ...base, type }, ['Subject B']));
    const first = await runBoth();
    const waiting = await sendRow(t, utr);
    assert.deepEqual([waiting.status, waiting.triggered, waiting.ab_winner], [2, 200, null]);
    assert.ok(waiting.ab_wait_ends_at !== null);
    t.clock.advance(HOUR);
    const second = await runBoth();
    ctx.diagnostic(`claimed by each worker: share ${first.join('/')}, winner ${second.join('/')}`);
    assert.ok(first.every((n) => n > 0) && second.every((n) => n > 0), 'both workers sent');
    const done = await sendRow(t, utr);
    assert.deepEqual([done.status, done.triggered, done.delivered, done.ab_winner], [3, 400, 400, 0]);
    exactlyOnce(t, emails);
    const events = (await eventsSince(t.database, since, 'single_send.ab_winner')).filter((e) => e.body.data.utr === utr);
    assert.equal(events.length, 1);
  });

  test('two picks by hand at once on two servers: one wins, the other answers 409', async () => {
    const { type, emails } = await audience(t, 'hands', 40);
    const utr = await createSend(t.a, abForm({ ...base, type }, ['Subject B']));
    await runBoth();
    const userId = t.a.keys!.user_id;
    const outcomes = await Promise.allSettled([
      pickAbWinner(t.deps, userId, { utr, variant: 0 }),
      pickAbWinner({ ...t.deps, database: other }, userId, { utr, variant: 1 }),
    ]);
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    assert.equal(won.length, 1);
    assert.equal(lost.length, 1);
    assert.ok(lost[0].reason instanceof Conflict, String(lost[0].reason));
    const winner = (won[0] as PromiseFulfilledResult<{ ab_winner: number; queued: number }>).value;
    assert.equal(winner.queued, 20);
    assert.equal((await sendRow(t, utr)).ab_winner, winner.ab_winner);
    await runBoth();
    exactlyOnce(t, emails);
    assert.deepEqual((await sendRow(t, utr)).triggered, 40);
  });
});
