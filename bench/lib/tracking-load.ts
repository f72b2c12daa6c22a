/**
 * What the tracking-route benchmarks share (`bench:opens`, `bench:clicks`): a fresh database and
 * server per engine, a single send of seeded messages, then rounds of the bare route, the route
 * measured and the one-write ceiling (`GET /bench/one-write`), interleaved, with the ratios per
 * round and their medians. Knobs (env): BENCH_MESSAGES (10000), BENCH_DURATION (5 s),
 * BENCH_RUNS (3), BENCH_CONNECTIONS (10), BENCH_ENGINES (sqlite,postgres), BENCH_PIN=0.
 */
import { availableParallelism } from 'node:os';
import type { Db } from '../../src/db/index.js';
import { trackingLinks } from '../../src/delivery/tracking.js';
import { seedSingleSend, type SeededSend } from '../../test/public/seed.js';
import { benchDatabase, pgReachable, seedAccount, type Engine } from './db.js';
import { runLoad } from './load.js';
import { fmt, median, printFigure } from './measure.js';
import { startServer } from './server.js';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 10_000);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',') as Engine[];
const PIN_CPU = process.env.BENCH_PIN === '0' ? undefined : availableParallelism() - 1;

/** One tracking route under load. */
export interface TrackingBench {
  /** What is measured, e.g. `open pixel`. */
  name: string;
  /** The unit of the route's figure, e.g. `hits/s`. */
  unit: string;
  /** Whether its answers are redirects. */
  redirects?: boolean;
  /** Headers of the route's requests (a mail client's User-Agent, so the opens and clicks are people's). */
  headers?: Record<string, string>;
  /** Per engine, the target: `bare` (route ÷ bare) or `write` (route ÷ one write), and its value. */
  target: Record<Engine, { over: 'bare' | 'write'; ratio: number }>;
  /** The request paths of the seeded send (each request picks one at random); may seed more. */
  paths(db: Db, send: SeededSend, links: ReturnType<typeof trackingLinks>): Promise<string[]>;
  /** After the rounds: prints what was counted against `answered`, the answers autocannon saw. */
  counted(db: Db, send: SeededSend, answered: number): Promise<void>;
}

async function benchEngine(engine: Engine, b: TrackingBench): Promise<void> {
  console.log(`\n== ${engine}: ${fmt(MESSAGES)} messages, ${RUNS} rounds × ${DURATION} s, ${CONNECTIONS} connections`);
  const bench = await benchDatabase(engine);
  const appSecret = `bench-${b.name.replace(/\W/g, '-')}-secret`;
  const server = await startServer({ env: { DATABASE_URL: bench.url, BENCH_BARE_ROUTE: '1', APP_SECRET: appSecret }, cpu: PIN_CPU });
  try {
    const { user_id } = await seedAccount(bench.db);
    const emails = Array.from({ length: MESSAGES }, (_, i) => `reader${i}@bench.example.com`);
    const send = await seedSingleSend(bench.db, user_id, emails);
    const paths = await b.paths(bench.db, send, trackingLinks({ appSecret, publicUrl: server.url }));
    const pick = () => paths[Math.floor(Math.random() * paths.length)];
    const load = (path: string | (() => string), redirects = false, headers?: Record<string, string>) =>
      runLoad({ url: server.url, path, headers, connections: CONNECTIONS, duration: DURATION, redirects });

    // Warm-up: JIT, connections, the first (unique) events of many messages.
    await runLoad({ url: server.url, path: '/bench/bare', connections: CONNECTIONS, duration: 2 });
    const warm = await runLoad({
      url: server.url,
      path: pick,
      headers: b.headers,
      connections: CONNECTIONS,
      duration: 2,
      redirects: b.redirects,
    });

    const bare: number[] = [];
    const route: number[] = [];
    const writes: number[] = [];
    const overBare: number[] = [];
    const overWrite: number[] = [];
    let answered = warm.requests;
    for (let round = 1; round <= RUNS; round++) {
      const x = await load('/bench/bare');
      const r = await load(pick, b.redirects, b.headers);
      const w = await load('/bench/one-write');
      answered += r.requests;
      bare.push(x.rps);
      route.push(r.rps);
      writes.push(w.rps);
      overBare.push(r.rps / x.rps);
      overWrite.push(r.rps / w.rps);
      console.log(
        `round ${round}: bare ${fmt(x.rps)} req/s (p99 ${x.p99} ms), ${b.name} ${fmt(r.rps)} ${b.unit} (p99 ${r.p99} ms), ` +
          `ratio ${(r.rps / x.rps).toFixed(2)}; one committed write ${fmt(w.rps)} req/s, ${b.name} ÷ one write ${(r.rps / w.rps).toFixed(2)}`,
      );
    }
    printFigure(`${b.name} (median)`, median(route), { label: 'bare', value: median(bare) }, 'req/s');
    printFigure('ceiling: one write (median)', median(writes), { label: 'bare', value: median(bare) }, 'req/s');
    const target = b.target[engine];
    const ratios = target.over === 'bare' ? overBare : overWrite;
    const m = median(ratios);
    console.log(
      `${b.name} ÷ ${target.over === 'bare' ? 'bare' : 'one write'} per round: ${ratios.map((r) => r.toFixed(2)).join(' ')}; ` +
        `median ${m.toFixed(2)} (target ≥ ${target.ratio.toFixed(2)} ${m >= target.ratio ? 'met' : 'MISSED'})`,
    );
    await b.counted(bench.db, send, answered);
  } finally {
    await server.stop();
    await bench.drop();
  }
}

/** Runs `b` on each engine of BENCH_ENGINES (PostgreSQL skipped when it does not answer). */
export async function runTrackingBench(b: TrackingBench): Promise<void> {
  for (const engine of ENGINES) {
    if (engine === 'postgres' && !(await pgReachable())) {
      console.log('\n== postgres: not reachable, skipped');
      continue;
    }
    await benchEngine(engine, b);
  }
}

export { MESSAGES };
