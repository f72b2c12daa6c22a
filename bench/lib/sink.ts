import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { pgReachable, type Engine } from './db.js';

const ENTRY = fileURLToPath(new URL('./smtp-sink-process.ts', import.meta.url));

/** The benchmark SMTP sink running in its own process (bench/lib/smtp-sink-process.ts). */
export interface BenchSink {
  /** Its pid (the sink process itself). */
  readonly pid: number;
  /** `smtp://127.0.0.1:<port>`: the SMTP_URL of a sender. */
  readonly url: string;
  /** Messages received and their bytes since the last reset. */
  total(): Promise<{ messages: number; bytes: number }>;
  /** Messages received per envelope recipient (lower-cased) since the last reset. */
  counts(): Promise<Map<string, number>>;
  /** When each message arrived since the last reset (epoch ms, fractional), in order. */
  arrivals(): Promise<number[]>;
  reset(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the sink process and waits until it listens. */
export function startSink(): Promise<BenchSink> {
  const child = spawn(process.execPath, ['--import', 'tsx', ENTRY], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sink did not start:\n${output}`)), 30_000);
    const onData = (b: Buffer) => {
      output += b.toString();
      const m = /SINK_READY (\d+) (\d+)/.exec(output);
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.stdout!.resume();
      const api = `http://127.0.0.1:${m[2]}`;
      const get = async (path: string, method = 'GET') => {
        const r = await fetch(api + path, { method });
        if (!r.ok) throw new Error(`sink ${path}: ${r.status}`);
        return r.json();
      };
      resolve({
        pid: child.pid!,
        url: `smtp://127.0.0.1:${m[1]}`,
        total: () => get('/total'),
        counts: async () => new Map(Object.entries(await get('/counts')) as Array<[string, number]>),
        arrivals: () => get('/arrivals'),
        reset: async () => void (await get('/reset', 'POST')),
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          await exited;
        },
      });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (b: Buffer) => (output += b.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`sink exited with ${code}:\n${output}`));
    });
  });
}

/**
 * Missed and duplicated recipients: each expected address should have exactly one message.
 * `duplicated` counts extra copies (an address received 3 times adds 2); `unexpected` counts
 * messages to addresses not expected at all.
 */
export function tallyRecipients(
  counts: Map<string, number>,
  expected: Iterable<string>,
): { missed: number; duplicated: number; unexpected: number } {
  let missed = 0;
  let duplicated = 0;
  const want = new Set<string>();
  for (const e of expected) {
    const key = e.toLowerCase();
    want.add(key);
    const n = counts.get(key) ?? 0;
    if (n === 0) missed++;
    else duplicated += n - 1;
  }
  let unexpected = 0;
  for (const [k, n] of counts) if (!want.has(k)) unexpected += n;
  return { missed, duplicated, unexpected };
}

/**
 * The main of the mail benchmarks: starts the sink, runs `bench` for each engine in turn
 * (PostgreSQL skipped with a line when it is not reachable), stops the sink; a failure is printed
 * and exits 1.
 */
export function runWithSink(engines: Engine[], bench: (engine: Engine, sink: BenchSink) => Promise<void>): void {
  (async () => {
    const sink = await startSink();
    try {
      for (const engine of engines) {
        if (engine === 'postgres' && !(await pgReachable())) {
          console.log('\n== postgres: not reachable, skipped');
          continue;
        }
        await bench(engine, sink);
      }
    } finally {
      await sink.stop();
    }
  })().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
