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
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchDatabase, seedAccount, type Engine } from './lib/db.js';
import { fmt, printFigure } from './lib/measure.js';
import { startServer } from './lib/server.js';
import { runWithSink, tallyRecipients, type BenchSink } from './lib/sink.js';
import type { Db } from '../src/db/index.js';
import { isoMicros } from '../src/util/time.js';

const RATE = Number(process.env.BENCH_RATE ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
/** Arrivals before this are the warm-up (connections opening, first claims): not measured. */
const WARMUP_MS = 2000;
const TOLERANCE = 0.03;
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

/** The most arrivals in any window of `ms`. */
function most(arrivals: number[], ms: number): number {
  let best = 0;
  for (let i = 0, j = 0; i < arrivals.length; i++) {
    while (arrivals[i] - arrivals[j] > ms) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

/** Runs senders until the measured stretch is over; returns the rate over it and the worst 1-second window. */
async function measure(sink: BenchSink, label: string, start: () => Promise<Array<() => Promise<void>>>): Promise<boolean> {
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
  const from = arrivals[0] + WARMUP_MS;
  const inStretch = arrivals.filter((a) => a >= from && a < from + SECONDS * 1000);
  const measured = inStretch.length / SECONDS;
  const ratio = printFigure(label, measured, { label: 'target', value: RATE }, 'msg/s');
  const ok = Math.abs(ratio - 1) <= TOLERANCE;
  const worst = most(arrivals, 1000);
  console.log(
    `${''.padEnd(28)} ${ok ? 'within' : 'OUTSIDE'} ±${TOLERANCE * 100}%; most in any 1 s window ${worst} (promised ≤ ${fmt(RATE + 1)}), in any 3 s ${most(arrivals, 3000)} (≤ ${fmt(3 * RATE + 1)})`,
  );
  return ok && worst <= RATE + 1;
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
      const emails = await queueMails(bench.db, userId, Math.ceil(RATE * (SECONDS + WARMUP_MS / 1000 + 5)), 'rate');
      const env = { DATABASE_URL: bench.url, SMTP_URL: smtpUrl, DATA_DIR: dir, APP_SECRET };
      const ok = await measure(sink, `${engine}, ${label}`, async () => {
        if (engine === 'sqlite') {
          const server = await startServer({ entry: MAIN, env: { ...env, LOG_LEVEL: 'info' } });
          return [server.stop];
        }
        return Array.from({ length: workers }, () => startWorkerProcess(env).stop);
      });
      // Whatever the rate, every message the relay got was one of the queued ones, and got once.
      const counts = await sink.counts();
      const t = tallyRecipients(counts, emails);
      if (t.duplicated || t.unexpected) throw new Error(`duplicated ${t.duplicated}, unexpected ${t.unexpected}`);
      results.push(ok);
    } finally {
      await bench.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  if (engine === ENGINES[ENGINES.length - 1] && results.some((r) => !r)) process.exitCode = 1;
});
