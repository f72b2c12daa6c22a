/**
 * `npm run bench:bounces`: raw DSNs per second taken in through `POST /inbound/email/<token>` (each
 * a distinct Postfix DSN naming a distinct sent message by VERP address and Message-ID: parsed,
 * matched, de-duplicated, counted and its address suppressed; the DSNs that arrive together share
 * one transaction, and each is answered after its commit), beside
 * parsing the same messages with the same parser (`parseInboundMail` + `reportEvents`) in this
 * process with no database and no HTTP, rounds interleaved. Every DSN must come back matched and
 * every message must end counted. The target is on the median of the per-round ratios.
 * Knobs (env): BENCH_DSNS (1000 per round), BENCH_RUNS (3), BENCH_CONNECTIONS (10),
 * BENCH_ENGINES (sqlite,postgres), BENCH_PIN=0 (no CPU pinning), BENCH_PROF=<dir> (a CPU profile of the server).
 */
import { availableParallelism } from 'node:os';
import { trackingLinks } from '../src/delivery/tracking.js';
import { parseInboundMail, reportEvents } from '../src/inbound/parse.js';
import { seedSingleSend } from '../test/public/seed.js';
import { fixture } from '../test/inbound/fixtures.js';
import { benchDatabase, pgReachable, seedAccount, type Engine } from './lib/db.js';
import { fmt, median, printFigure } from './lib/measure.js';
import { startServer } from './lib/server.js';

const DSNS = Number(process.env.BENCH_DSNS ?? 1000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',') as Engine[];
const PIN_CPU = process.env.BENCH_PIN === '0' ? undefined : availableParallelism() - 1;
const TARGET = 0.5; // DSNs/s through the route ≥ 50% of parsing alone
const APP_SECRET = 'bench-bounces-secret';
const TOKEN = 'bench-inbound-token';
const BOUNCE_ADDRESS = 'bounces@bench.example.com';

/** Parses every message as the route does, without a database: messages per second. */
async function parseOnly(raws: Buffer[]): Promise<number> {
  const start = performance.now();
  for (const raw of raws) reportEvents(await parseInboundMail(raw), raw, 'inbound');
  return raws.length / ((performance.now() - start) / 1000);
}

/** Posts every message once, `CONNECTIONS` at a time: messages per second, and how many came back matched. */
async function throughRoute(url: string, raws: Buffer[]): Promise<{ rate: number; matched: number }> {
  let next = 0;
  let matched = 0;
  const start = performance.now();
  const lane = async () => {
    while (next < raws.length) {
      const raw = raws[next++];
      const res = await fetch(`${url}/inbound/email/${TOKEN}`, {
        method: 'POST',
        body: new Uint8Array(raw),
        headers: { 'content-type': 'message/rfc822' },
      });
      const body = (await res.json()) as { message?: { matched?: boolean } };
      if (res.status !== 200) throw new Error(`status ${res.status}: ${JSON.stringify(body)}`);
      if (body.message?.matched) matched++;
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, lane));
  return { rate: raws.length / ((performance.now() - start) / 1000), matched };
}

async function benchEngine(engine: Engine): Promise<void> {
  console.log(`\n== ${engine}: ${fmt(DSNS)} DSNs per round, ${RUNS} rounds, ${CONNECTIONS} connections`);
  const bench = await benchDatabase(engine);
  const server = await startServer({
    env: { DATABASE_URL: bench.url, APP_SECRET, INBOUND_TOKEN: TOKEN, BOUNCE_ADDRESS },
    cpu: PIN_CPU,
    nodeArgs: process.env.BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}`] : [],
  });
  try {
    const { user_id } = await seedAccount(bench.db);
    const total = DSNS * (RUNS + 1);
    const emails = Array.from({ length: total }, (_, i) => `reader${i}@bench.example.com`);
    const send = await seedSingleSend(bench.db, user_id, emails);
    const rows = await bench.db
      .selectFrom('mail_messages')
      .select(['id', 'email', 'message_id'])
      .where('single_send_id', '=', send.sendId)
      .orderBy('id')
      .execute();
    const links = trackingLinks({ appSecret: APP_SECRET, publicUrl: server.url, bounceAddress: BOUNCE_ADDRESS });
    const dsns = rows.map((r) =>
      fixture('postfix-dsn-user-unknown', {
        rcpt: r.email,
        verp: links.verpAddress(Number(r.id))!,
        messageId: r.message_id!.replace(/^<|>$/g, ''),
      }),
    );
    // Warm-up round (JIT, connections, caches): its own messages.
    await parseOnly(dsns.slice(0, DSNS));
    await throughRoute(server.url, dsns.slice(0, DSNS));

    const parsed: number[] = [];
    const routed: number[] = [];
    const ratios: number[] = [];
    for (let round = 1; round <= RUNS; round++) {
      const batch = dsns.slice(round * DSNS, (round + 1) * DSNS);
      const p = await parseOnly(batch);
      const r = await throughRoute(server.url, batch);
      if (r.matched !== batch.length) throw new Error(`round ${round}: ${r.matched} of ${batch.length} matched`);
      parsed.push(p);
      routed.push(r.rate);
      ratios.push(r.rate / p);
      console.log(`round ${round}: parse only ${fmt(p)} msg/s, route ${fmt(r.rate)} DSNs/s, ratio ${(r.rate / p).toFixed(2)}`);
    }
    printFigure('inbound DSNs (median)', median(routed), { label: 'parse only', value: median(parsed) }, 'msg/s');
    const m = median(ratios);
    console.log(
      `ratio per round: ${ratios.map((r) => r.toFixed(2)).join(' ')}; median ${m.toFixed(2)} (target ≥ ${TARGET.toFixed(2)} ${m >= TARGET ? 'met' : 'MISSED'})`,
    );

    // Every DSN counted once: the send's bounces against the DSNs posted (warm-up included).
    const stats = await bench.db
      .selectFrom('single_sends')
      .select(['bounces', 'hard_bounces', 'delivered'])
      .where('id', '=', send.sendId)
      .executeTakeFirstOrThrow();
    const suppressed = await bench.db
      .selectFrom('suppressions')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('user_id', '=', user_id)
      .executeTakeFirstOrThrow();
    console.log(
      `counted: bounces ${fmt(stats.bounces)} (hard ${fmt(stats.hard_bounces)}) for ${fmt(total)} DSNs posted; ${fmt(Number(suppressed.n))} addresses suppressed`,
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
