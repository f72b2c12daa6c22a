import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';

/** The default entry: the production app plus the optional bare route (see bench/server.ts). */
export const BENCH_SERVER_ENTRY = fileURLToPath(new URL('../server.ts', import.meta.url));
/** The compiled server `npm start` runs (`npm run build` first): the API and its queue worker. */
export const PRODUCTION_ENTRY = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
/** The node flags of `npm start` (its heap bound), read from package.json: the production entry runs with them. */
const PRODUCTION_FLAGS: string[] = (() => {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
  return /node ((?:--\S+ )*)dist\/main\.js/.exec(pkg.scripts.start)?.[1].trim().split(' ').filter(Boolean) ?? [];
})();

export interface BenchServer {
  /** Pid of the node process that serves (not a wrapper): read its /proc status for memory. */
  readonly pid: number;
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  readonly child: ChildProcess;
  /** What the process printed (stdout and stderr) until it listened, e.g. `BENCH_WORKER {…}`. */
  readonly startOutput: string;
  /** SIGTERM, then SIGKILL after 5 s; resolves when the process has exited. */
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Extra environment (DATABASE_URL, RATE_LIMIT_PER_MINUTE, BENCH_BARE_ROUTE, …). */
  env?: Record<string, string>;
  /** Script to run (default bench/server.ts). It must print `BENCH_READY <url>` or pino's "Server listening at <url>". */
  entry?: string;
  /** Extra node flags, e.g. `['--cpu-prof', '--cpu-prof-dir=/tmp/prof']`. */
  nodeArgs?: string[];
  timeoutMs?: number;
  /**
   * Pins the server (all its threads) to this CPU, and this process to the others, with `taskset`
   * (skipped where it or a second CPU is missing): load generator and server then stop trading
   * places on the same core, which is most of the run-to-run noise on a small machine.
   */
  cpu?: number;
}

const READY = /(?:BENCH_READY|Server listening at) (https?:\/\/[^\s"]+)/;

/**
 * Starts the server as a child process (`node [--import tsx] <entry>`, so the pid is the server
 * itself) on a free port, quiet logs and no rate limit unless `env` says otherwise, and waits
 * until it listens.
 */
export function startServer(opts: StartOptions = {}): Promise<BenchServer> {
  const entry = opts.entry ?? BENCH_SERVER_ENTRY;
  // TypeScript entries run through tsx; compiled ones with plain node, as in production.
  const loader = entry.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const flags = entry === PRODUCTION_ENTRY ? PRODUCTION_FLAGS : [];
  const child = spawn(process.execPath, [...flags, ...(opts.nodeArgs ?? []), ...loader, entry], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '0', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`server did not start within ${opts.timeoutMs ?? 60_000} ms:\n${output}`));
    }, opts.timeoutMs ?? 60_000);
    const onData = (buf: Buffer) => {
      output += buf.toString();
      const m = READY.exec(output);
      if (m) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        if (process.env.BENCH_VERBOSE) child.stdout!.on('data', (b: Buffer) => process.stderr.write(b));
        child.stdout!.resume(); // keep draining so a chatty server never blocks on a full pipe
        if (opts.cpu !== undefined) pin(child.pid!, opts.cpu);
        resolve({ pid: child.pid!, url: m[1], child, startOutput: output, stop });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (buf: Buffer) => {
      output += buf.toString();
      if (process.env.BENCH_VERBOSE) process.stderr.write(buf);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${output}`));
    });
  });
}

/** Whether `pin` can work here: `taskset` present and more than one CPU. */
export const canPin = availableParallelism() > 1 && spawnSync('taskset', ['--version']).status === 0;

/** `taskset`: the server's threads on `cpu`, this process's on every other CPU. */
function pin(pid: number, cpu: number): void {
  if (!canPin) return;
  const others = Array.from({ length: availableParallelism() }, (_, i) => i).filter((i) => i !== cpu);
  spawnSync('taskset', ['-a', '-pc', String(cpu), String(pid)], { stdio: 'ignore' });
  spawnSync('taskset', ['-a', '-pc', others.join(','), String(process.pid)], { stdio: 'ignore' });
}
