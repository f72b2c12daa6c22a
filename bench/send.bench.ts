/**
 * `npm run bench:send`: a single send to 100,000 contacts through the real server, from
 * `POST /single/send/create` until `GET /single-send/details` shows status 3 and the SMTP sink (its
 * own process) has every message, beside the baseline measured in the same run: the same messages
 * built by the same rendering code and pushed through the same SMTP transport into the same sink,
 * with no database and no queue; and the raw ceiling (one message's bytes, built once, pushed to
 * every recipient). Then the same send at a tenth of the size: cost per message and peak RSS
 * should stay within 10%; then that small send again after BENCH_HISTORY (1,000,000) earlier
 * messages to the same addresses were seeded by SQL: at least 0.9 of its rate without them; then that small send as an A/B test
 * (two subject variants, 20% in the test, its wait ended by the bench as soon as it begins): the whole send's rate at least 0.9 of
 * the same send without a test. Every run checks the sink got each address exactly once. See bench/README.md.
 * Knobs (env): BENCH_RECIPIENTS (100000), BENCH_SMALL (a tenth), BENCH_HISTORY (1000000; 0: no history case), BENCH_AB (1; 0: no A/B case),
 * BENCH_ENGINES (sqlite,postgres),
 * BENCH_PROF=1 (CPU profile of the server of the large send in /tmp/prof-send), BENCH_BUILD=0 (use dist/ as it is),
 * BENCH_NODE_ARGS (extra node flags for the server), BENCH_VERBOSE=1.
 * The server is the production one: `dist/main.js` (built first), plain node, as `npm start` runs it.
 */
import { execSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Db } from '../src/db/index.js';
import { wakeWorkers } from '../src/messages/mail.queue.js';
import { isoMicros } from '../src/util/time.js';
import { benchDatabase, seedAccount, seedContacts, type Engine } from './lib/db.js';
import { seedHistory } from './lib/history.js';
import { fmt, peakRssKb, printFigure, sampleMemory } from './lib/measure.js';
import { sendBaseline, sendRaw } from './lib/send-baseline.js';
import { createSend, SEND_APP_SECRET, SEND_PUBLIC_URL, seedSenderAndGroup, seededEmails, sendForm, waitCompleted } from './lib/sends.js';
import { PRODUCTION_ENTRY, startServer } from './lib/server.js';
import { runWithSink, tallyRecipients, type BenchSink } from './lib/sink.js';

const N = Number(process.env.BENCH_RECIPIENTS ?? 100_000);
/** The servers' data folder (the outbox and generated secrets are not used: SMTP_URL and APP_SECRET are set). */
const DATA = mkdtempSync(join(tmpdir(), 'bench-send-'));
const SMALL = Number(process.env.BENCH_SMALL ?? Math.round(N / 10));
const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',') as Engine[];
const TARGETS: Record<Engine, number> = { sqlite: 0.75, postgres: 0.6 };
const RSS_TARGET_MB = 250;
const SCALE_TOLERANCE = 0.1;
/** Earlier messages seeded before the history case (0: no such case). */
const HISTORY = Number(process.env.BENCH_HISTORY ?? 1_000_000);
const HISTORY_TARGET = 0.9;
/** The A/B case (BENCH_AB=0: none) and its target: the whole send's rate ÷ the same send's without a test. */
const AB = process.env.BENCH_AB !== '0';
const AB_TARGET = 0.9;
/** The A/B case's test: two variants (the send's subject and one more), 20% of the recipients, the shortest wait (ended by the bench). */
const AB_TEST = {
  ab_test: 1,
  ab_test_percent: 20,
  ab_winner_metric: 'opens',
  ab_wait_minutes: 1,
  variants: [{ subject: 'Spring news for ((first_name)), in short' }],
};

/** CPU time (user + system) a process has used, in ms (/proc/<pid>/stat, clock ticks of 10 ms). */
function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Fails loudly unless the sink received each of the `n` addresses from `from` exactly once. */
async function checkDelivered(sink: BenchSink, from: number, n: number, what: string): Promise<void> {
  const t = tallyRecipients(await sink.counts(), seededEmails(from, n));
  if (t.missed || t.duplicated || t.unexpected)
    throw new Error(`${what}: missed ${t.missed}, duplicated ${t.duplicated}, unexpected ${t.unexpected}`);
}

interface SendRun {
  utr: string;
  ms: number;
  rate: number;
  peakMb: number;
  /** Largest anonymous (heap) and file-mapped (code, SQLite's memory map) RSS sampled, MB. */
  anonMb: number;
  fileMb: number;
  serverCpuMs: number;
  sinkCpuMs: number;
}

/** One send of `n` contacts of `type` (numbered from `from`) on a fresh server; fails unless every address got one mail. */
async function pipeline(
  url: string,
  sink: BenchSink,
  base: { sender: number; group: number },
  headers: Record<string, string>,
  type: number,
  from: number,
  n: number,
  prof: boolean,
  abTest: { db: Db } | null = null,
): Promise<SendRun> {
  await sink.reset();
  // The production server (`npm start`: compiled, plain node, the API and its worker in one
  // process); `info` for pino's "Server listening at <url>" line, which startServer waits for.
  const server = await startServer({
    entry: PRODUCTION_ENTRY,
    env: {
      DATABASE_URL: url,
      SMTP_URL: sink.url,
      APP_SECRET: SEND_APP_SECRET,
      PUBLIC_URL: SEND_PUBLIC_URL,
      DATA_DIR: DATA,
      LOG_LEVEL: 'info',
    },
    nodeArgs: [
      ...(prof ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof-send'] : []),
      ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
    ],
  });
  try {
    const cpu0 = cpuMsOf(server.pid);
    const sinkCpu0 = cpuMsOf(sink.pid);
    const memory = sampleMemory(server.pid, 100);
    const t0 = performance.now();
    const form = sendForm(base, type, `Bench send of ${n}${abTest ? ', A/B test' : ''}`);
    const utr = await createSend(server.url, headers, abTest ? { ...form, ...AB_TEST } : form);
    const d = await waitCompleted(server.url, headers, utr, sink, n, { onPoll: abTest ? () => endWait(abTest.db, utr) : undefined });
    const ms = performance.now() - t0;
    const { maxAnonKb, maxFileKb } = memory.stop();
    const run = {
      utr,
      ms,
      rate: (n / ms) * 1000,
      peakMb: peakRssKb(server.pid) / 1024,
      anonMb: maxAnonKb / 1024,
      fileMb: maxFileKb / 1024,
      serverCpuMs: cpuMsOf(server.pid) - cpu0,
      sinkCpuMs: cpuMsOf(sink.pid) - sinkCpu0,
    };
    if (d.triggered !== n || d.delivered !== n) throw new Error(`send of ${n}: triggered ${d.triggered}, delivered ${d.delivered}`);
    await checkDelivered(sink, from, n, `send of ${n}`);
    return run;
  } finally {
    await server.stop();
  }
}

/**
 * Ends an A/B test's wait as soon as it begins (the server's clock is the real one, and the
 * shortest wait is a minute): its end moved to now, and on PostgreSQL the workers woken.
 */
async function endWait(db: Db, utr: string): Promise<void> {
  const at = isoMicros(new Date());
  const r = await db
    .updateTable('single_sends')
    .set({ ab_wait_ends_at: at })
    .where('utr', '=', utr)
    .where('ab_winner', 'is', null)
    .where('ab_wait_ends_at', '>', at)
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) > 0) await wakeWorkers(db);
}

async function benchEngine(engine: Engine, sink: BenchSink): Promise<void> {
  console.log(`\n== ${engine}: a single send to ${fmt(N)} contacts, then to ${fmt(SMALL)}`);
  const bench = await benchDatabase(engine);
  try {
    const { user_id, headers } = await seedAccount(bench.db);
    const big = await seedContacts(bench.db, user_id, N, { types: 1 });
    const at = new Date().toISOString();
    const smallType = await bench.db
      .insertInto('contact_types')
      .values({ user_id, name: 'Bench small', name_key: 'bench small', created_at: at, updated_at: at })
      .returning('id')
      .executeTakeFirstOrThrow();
    const small = await seedContacts(bench.db, user_id, SMALL, { typeIds: [smallType.id], from: N });
    const base = await seedSenderAndGroup(bench.db, user_id);

    await sink.reset();
    const raw = await sendRaw(sink.url, 0, N);
    await checkDelivered(sink, 0, N, 'raw ceiling');
    const rawRate = (N / raw.ms) * 1000;
    console.log(`raw ceiling (pre-built ${fmt(raw.bytes)} B message)  ${fmt(rawRate)} msg/s  (${(raw.ms / 1000).toFixed(1)} s)`);

    await sink.reset();
    const cpu0 = process.cpuUsage();
    const baseMs = await sendBaseline(sink.url, 0, N);
    const cpu = process.cpuUsage(cpu0);
    await checkDelivered(sink, 0, N, 'baseline');
    const baseRate = (N / baseMs) * 1000;
    printFigure('baseline (render + SMTP)', baseRate, { label: 'raw', value: rawRate }, 'msg/s');
    console.log(`  baseline CPU ${((cpu.user + cpu.system) / 1000 / N).toFixed(3)} ms/msg (${(baseMs / 1000).toFixed(1)} s)`);

    const large = await pipeline(bench.url, sink, base, headers, big.typeIds[0], 0, N, process.env.BENCH_PROF === '1');
    const ratio = printFigure(`pipeline ${fmt(N)}`, large.rate, { label: 'baseline', value: baseRate }, 'msg/s', TARGETS[engine]);
    console.log(`  ÷ raw ceiling ${(large.rate / rawRate).toFixed(2)}; ${(large.ms / 1000).toFixed(1)} s create → status 3`);
    console.log(`  server CPU ${(large.serverCpuMs / N).toFixed(3)} ms/msg, sink CPU ${(large.sinkCpuMs / N).toFixed(3)} ms/msg`);
    console.log(
      `  server peak RSS ${large.peakMb.toFixed(0)} MB (target ≤ ${RSS_TARGET_MB} ${large.peakMb <= RSS_TARGET_MB ? 'met' : 'MISSED'});` +
        ` sampled: anonymous ${large.anonMb.toFixed(0)} MB, mapped files ${large.fileMb.toFixed(0)} MB`,
    );

    const little = await pipeline(bench.url, sink, base, headers, small.typeIds[0], N, SMALL, false);
    const perMsgLarge = large.ms / N;
    const perMsgSmall = little.ms / SMALL;
    const costRatio = perMsgSmall / perMsgLarge;
    const rssRatio = little.peakMb / large.peakMb;
    const within = (r: number) => (Math.abs(r - 1) <= SCALE_TOLERANCE ? 'met' : 'MISSED');
    console.log(
      `pipeline ${fmt(SMALL)}              ${fmt(little.rate)} msg/s  (${(little.ms / 1000).toFixed(1)} s), server CPU ${(little.serverCpuMs / SMALL).toFixed(3)} ms/msg`,
    );
    console.log(
      `  cost per message ${perMsgSmall.toFixed(3)} ms vs ${perMsgLarge.toFixed(3)} ms at ${fmt(N)}: ratio ${costRatio.toFixed(2)} (within 10% ${within(costRatio)})`,
    );
    console.log(
      `  peak RSS ${little.peakMb.toFixed(0)} MB vs ${large.peakMb.toFixed(0)} MB: ratio ${rssRatio.toFixed(2)} (within 10% ${within(rssRatio)});` +
        ` sampled: anonymous ${little.anonMb.toFixed(0)} MB, mapped files ${little.fileMb.toFixed(0)} MB`,
    );
    if (AB) {
      // The same small send as an A/B test on a fresh server: the test share, the wait (ended at
      // once), the winner chosen and the rest resolved and sent; each address still once.
      const ab = await pipeline(bench.url, sink, base, headers, small.typeIds[0], N, SMALL, false, { db: bench.db });
      printFigure(`pipeline ${fmt(SMALL)}, A/B test`, ab.rate, { label: 'without', value: little.rate }, 'msg/s', AB_TARGET);
      console.log(
        `  ${(ab.ms / 1000).toFixed(1)} s create → status 3 (without: ${(little.ms / 1000).toFixed(1)} s); peak RSS ${ab.peakMb.toFixed(0)} MB, ` +
          `server CPU ${(ab.serverCpuMs / SMALL).toFixed(3)} ms/msg (without: ${(little.serverCpuMs / SMALL).toFixed(3)})`,
      );
    }
    if (HISTORY > 0) {
      // The same small send again, on an account that now holds HISTORY more earlier messages to
      // the same addresses: history must not slow sending.
      const { id: sendId } = await bench.db.selectFrom('single_sends').select('id').where('utr', '=', large.utr).executeTakeFirstOrThrow();
      const seeded = performance.now();
      await seedHistory(bench.db, { userId: user_id, sendId, firstId: small.firstId, from: N, n: SMALL, total: HISTORY });
      console.log(
        `history: ${fmt(HISTORY)} earlier messages to those ${fmt(SMALL)} addresses, seeded in ${((performance.now() - seeded) / 1000).toFixed(1)} s`,
      );
      const again = await pipeline(bench.url, sink, base, headers, small.typeIds[0], N, SMALL, false);
      printFigure(`pipeline ${fmt(SMALL)}, history`, again.rate, { label: 'without', value: little.rate }, 'msg/s', HISTORY_TARGET);
      console.log(`  peak RSS ${again.peakMb.toFixed(0)} MB, server CPU ${(again.serverCpuMs / SMALL).toFixed(3)} ms/msg`);
    }
    console.log(`summary ${engine}: pipeline ÷ baseline ${ratio.toFixed(2)}, peak RSS ${large.peakMb.toFixed(0)} MB`);
  } finally {
    await bench.drop();
  }
}

if (process.env.BENCH_BUILD !== '0') execSync('npx tsc -p tsconfig.build.json', { stdio: 'inherit' });
process.on('exit', () => rmSync(DATA, { recursive: true, force: true }));
runWithSink(ENGINES, benchEngine);
