/**
 * `npm run bench:rate`: a relay limited to `rate=200` (messages per second, `SMTP_URL=…?rate=200`)
 * must receive 200 ± 3% over 30 s. The relay is the bench SMTP sink (its own process), which
 * stamps each message's arrival. Three runs: the server's one worker on SQLite; one worker
 * process, then two, on one PostgreSQL database (the two share the rate through the `relays`
 * row). Printed per run: the measured rate beside the target (the baseline) and their ratio, and
 * the most messages seen in any 1-second window (the contract: at most rate + 1).
 * Knobs (env): BENCH_RATE (200), BENCH_SECONDS (30), BENCH_ENGINES (sqlite,postgres), BENCH_VERBOSE=1.
 * Entries run through tsx (src/main.ts, src/worker.ts): the rate is the relay's, not the CPU's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchDatabase, seedAccount, type Engine } from './lib/db.js';
import { fmt, median, printFigure } from './lib/measure.js';
import { startServer } from './lib/server.js';
import { runWithSink, tallyRecipients, type BenchSink } from './lib/sink.js';
import type { Db } from '../src/db/index.js';
import { isoMicros } from '../src/util/time.js';

const RATE = Number(process.env.BENCH_RATE ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
/** Arrivals before this are the warm-up (connections opening, first claims): not measured. */
const WARMUP_MS = 2000;
const TOLERANCE = 0.03;
const RUNS = Number(process.env.BENCH_RUNS ?? 1);
const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',') as Engine[];
const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const WORKER = fileURLToPath(new URL('../src/worker.ts', import.meta.url));
const APP_SECRET = 'bench-rate-secret';

/** Queues `n` system mails due now (more than the run can send: the queue never runs dry). */
async function queueMails(db: Db, userId: number, n: number, tag: string): Promise<string[]> {
  const at = isoMicros(new Date());
  const emails = Array.from({ length: n }, (_, i) => `${tag}-${i}@example.com`);
  for (let i = 0; i < n; i += 500) {
    await db
      .insertInto('mail_messages')
      .values(
        emails.slice(i, i + 500).map((email) => ({
          user_id: userId,
          kind: 'system' as const,
          email,
          email_key: email,
          payload: JSON.stringify({
            from: { name: 'Bench', address: 'bench@example.com' },
            to: email,
            subject: `Rate ${email}`,
            text: 'Hello',
          }),
          next_attempt_at: at,
          created_at: at,
          updated_at: at,
        })),
      )
      .execute();
  }
  return emails;
}

/** A worker process (`src/worker.ts`); SIGTERM stops it. */
function startWorkerProcess(env: Record<string, string>): { child: ChildProcess; stop(): Promise<void> } {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
    env: { ...process.env, LOG_LEVEL: process.env.BENCH_VERBOSE ? 'info' : 'warn', ...env },
    stdio: ['ignore', process.env.BENCH_VERBOSE ? 'inherit' : 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    child,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The most arrivals in any window of `ms` (both ends included: the stricter reading). */
function most(arrivals: number[], ms: number): number {
  let best = 0;
  for (let i = 0, j = 0; i < arrivals.length; i++) {
    while (arrivals[i] - arrivals[j] > ms) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

/** One run's figures: the rate over the measured stretch, the fullest 1 s and 3 s windows, the longest silence. */
interface RunFigures {
  rate: number;
  most1: number;
  most3: number;
  longestGapMs: number;
}

/** Runs senders until the measured stretch is over, and reads the arrivals. */
async function measure(sink: BenchSink, start: () => Promise<Array<() => Promise<void>>>): Promise<RunFigures> {
  await sink.reset();
  const stops = await start();
  let arrivals: number[];
  try {
    for (;;) {
      await new Promise((r) => setTimeout(r, 1000));
      arrivals = await sink.arrivals();
      if (arrivals.length > 0 && arrivals[arrivals.length - 1] - arrivals[0] >= WARMUP_MS + SECONDS * 1000) break;
      if (arrivals.length === 0 && process.env.BENCH_VERBOSE) console.error('waiting for the first message…');
    }
  } finally {
    await Promise.all(stops.map((s) => s()));
  }
  if (process.env.BENCH_DUMP) writeFileSync(`${process.env.BENCH_DUMP}-${Date.now()}.json`, JSON.stringify(arrivals));
  const from = arrivals[0] + WARMUP_MS;
  const inStretch = arrivals.filter((a) => a >= from && a < from + SECONDS * 1000);
  let longestGapMs = 0;
  for (let i = 1; i < inStretch.length; i++) longestGapMs = Math.max(longestGapMs, inStretch[i] - inStretch[i - 1]);
  // The windows count every arrival, warm-up included: the promise holds from the first message.
  return { rate: inStretch.length / SECONDS, most1: most(arrivals, 1000), most3: most(arrivals, 3000), longestGapMs };
}

/** Prints one run's line, or the medians of several; true when the rate is within the tolerance and the windows hold. */
function report(label: string, f: RunFigures): boolean {
  const ratio = printFigure(label, f.rate, { label: 'target', value: RATE }, 'msg/s');
  const rateOk = Math.abs(ratio - 1) <= TOLERANCE;
  const windowsOk = f.most1 <= RATE + 1 && f.most3 <= 3 * RATE + 1;
  console.log(
    `${''.padEnd(28)} ${rateOk ? 'within' : 'OUTSIDE'} ±${TOLERANCE * 100}%; most in any 1 s window ${f.most1} (promised ≤ ${fmt(RATE + 1)}), in any 3 s ${f.most3} (≤ ${fmt(3 * RATE + 1)})${windowsOk ? '' : ' BROKEN'}; longest silence ${fmt(f.longestGapMs)} ms`,
  );
  return rateOk && windowsOk;
}

const results: boolean[] = [];
runWithSink(ENGINES, async (engine, sink) => {
  console.log(`\n== ${engine}: a relay at rate=${RATE}, ${SECONDS} s measured after ${WARMUP_MS / 1000} s of warm-up`);
  const smtpUrl = `${sink.url}?rate=${RATE}`;
  const runs: Array<[string, number]> =
    engine === 'sqlite'
      ? [['one worker (server)', 1]]
      : [
          ['one worker', 1],
          ['two workers', 2],
        ];
  for (const [label, workers] of runs) {
    const bench = await benchDatabase(engine);
    const dir = mkdtempSync(join(tmpdir(), 'bench-rate-'));
    try {
      const { user_id: userId } = await seedAccount(bench.db);
      // Enough for the whole run at the rate, and some: the queue never runs dry.
      const emails = await queueMails(bench.db, userId, RUNS * Math.ceil(RATE * (SECONDS + WARMUP_MS / 1000 + 5)), 'rate');
      const env = { DATABASE_URL: bench.url, SMTP_URL: smtpUrl, DATA_DIR: dir, APP_SECRET };
      const figures: RunFigures[] = [];
      for (let run = 1; run <= RUNS; run++) {
        const f = await measure(sink, async () => {
          if (engine === 'sqlite') {
            const server = await startServer({ entry: MAIN, env: { ...env, LOG_LEVEL: 'info' } });
            return [server.stop];
          }
          return Array.from({ length: workers }, () => startWorkerProcess(env).stop);
        });
        // Whatever the rate, every message the relay got was one of the queued ones, and got once.
        const t = tallyRecipients(await sink.counts(), emails);
        if (t.duplicated || t.unexpected) throw new Error(`duplicated ${t.duplicated}, unexpected ${t.unexpected}`);
        figures.push(f);
        if (RUNS > 1) report(`${engine}, ${label}, run ${run}`, f);
      }
      // Several runs: the median rate, and the fullest windows of all the runs.
      const summary =
        RUNS === 1
          ? figures[0]
          : {
              rate: median(figures.map((f) => f.rate)),
              most1: Math.max(...figures.map((f) => f.most1)),
              most3: Math.max(...figures.map((f) => f.most3)),
              longestGapMs: median(figures.map((f) => f.longestGapMs)),
            };
      results.push(report(RUNS === 1 ? `${engine}, ${label}` : `${engine}, ${label}, median of ${RUNS}`, summary));
    } finally {
      await bench.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  if (engine === ENGINES[ENGINES.length - 1] && results.some((r) => !r)) process.exitCode = 1;
});
