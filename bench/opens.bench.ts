/**
 * `npm run bench:opens`: hits/s of the open-tracking pixel (`GET /t/open/<token>.gif`) with genuine
 * tokens of 10,000 seeded messages (each hit verifies the token and counts the open in one
 * transaction), beside the bare route (`GET /bench/bare`) of the same server, rounds interleaved,
 * and the ceiling of a route that must commit a write before it answers: `GET /bench/one-write`
 * (one single-row UPDATE, no token, no lookup).
 * The target is on the median of the per-round ratios. See bench/README.md.
 * Knobs (env): BENCH_MESSAGES (10000), BENCH_DURATION (5 s), BENCH_RUNS (3), BENCH_CONNECTIONS (10),
 * BENCH_ENGINES (sqlite,postgres), BENCH_PIN=0 (no CPU pinning).
 */
import { availableParallelism } from 'node:os';
import { trackingLinks } from '../src/delivery/tracking.js';
import { seedSingleSend } from '../test/public/seed.js';
import { benchDatabase, pgReachable, seedAccount, type Engine } from './lib/db.js';
import { runLoad } from './lib/load.js';
import { fmt, median, printFigure } from './lib/measure.js';
import { startServer } from './lib/server.js';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 10_000);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',') as Engine[];
const PIN_CPU = process.env.BENCH_PIN === '0' ? undefined : availableParallelism() - 1;
const TARGET = 0.4; // pixel hits/s ≥ 40% of the bare route's
const APP_SECRET = 'bench-opens-secret';

async function benchEngine(engine: Engine): Promise<void> {
  console.log(`\n== ${engine}: ${fmt(MESSAGES)} messages, ${RUNS} rounds × ${DURATION} s, ${CONNECTIONS} connections`);
  const bench = await benchDatabase(engine);
  const server = await startServer({ env: { DATABASE_URL: bench.url, BENCH_BARE_ROUTE: '1', APP_SECRET }, cpu: PIN_CPU });
  try {
    const { user_id } = await seedAccount(bench.db);
    const emails = Array.from({ length: MESSAGES }, (_, i) => `reader${i}@bench.example.com`);
    const send = await seedSingleSend(bench.db, user_id, emails);
    const links = trackingLinks({ appSecret: APP_SECRET, publicUrl: server.url });
    const paths = send.messageIds.map((id) => `/t/open/${links.openToken(id)}.gif`);
    const pixel = () => paths[Math.floor(Math.random() * paths.length)];

    // Warm-up: JIT, connections, the first (unique) opens of many messages.
    await runLoad({ url: server.url, path: '/bench/bare', connections: CONNECTIONS, duration: 2 });
    const warm = await runLoad({ url: server.url, path: pixel, connections: CONNECTIONS, duration: 2 });

    const ratios: number[] = [];
    const bare: number[] = [];
    const opens: number[] = [];
    const writes: number[] = [];
    let hits = warm.requests;
    for (let round = 1; round <= RUNS; round++) {
      const b = await runLoad({ url: server.url, path: '/bench/bare', connections: CONNECTIONS, duration: DURATION });
      const o = await runLoad({ url: server.url, path: pixel, connections: CONNECTIONS, duration: DURATION });
      const w = await runLoad({ url: server.url, path: '/bench/one-write', connections: CONNECTIONS, duration: DURATION });
      hits += o.requests;
      bare.push(b.rps);
      opens.push(o.rps);
      writes.push(w.rps);
      ratios.push(o.rps / b.rps);
      console.log(
        `round ${round}: bare ${fmt(b.rps)} req/s (p99 ${b.p99} ms), pixel ${fmt(o.rps)} hits/s (p99 ${o.p99} ms), ratio ${(o.rps / b.rps).toFixed(2)}; ` +
          `one committed write ${fmt(w.rps)} req/s, ratio ${(w.rps / b.rps).toFixed(2)}`,
      );
    }
    printFigure('open pixel (median)', median(opens), { label: 'bare', value: median(bare) }, 'req/s');
    printFigure('ceiling: one write (median)', median(writes), { label: 'bare', value: median(bare) }, 'req/s');
    const m = median(ratios);
    console.log(
      `ratio per round: ${ratios.map((r) => r.toFixed(2)).join(' ')}; median ${m.toFixed(2)} (target ≥ ${TARGET.toFixed(2)} ${m >= TARGET ? 'met' : 'MISSED'})`,
    );

    // Every hit counted: the send's total against the hits autocannon saw answered (warm-up included).
    const stats = await bench.db
      .selectFrom('single_sends')
      .select(['total_opens', 'unique_opens'])
      .where('id', '=', send.sendId)
      .executeTakeFirstOrThrow();
    console.log(
      `counted: total_opens ${fmt(stats.total_opens)} for ${fmt(hits)} answered hits, unique_opens ${fmt(stats.unique_opens)} of ${fmt(MESSAGES)}`,
    );
  } finally {
    await server.stop();
    await bench.drop();
  }
}

async function main(): Promise<void> {
  for (const engine of ENGINES) {
    if (engine === 'postgres' && !(await pgReachable())) {
      console.log('\n== postgres: not reachable, skipped');
      continue;
    }
    await benchEngine(engine);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
