import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { ROOT } from './run.js';

/** A process of the service started by a test, its output (stdout and stderr) collected. */
export interface Child {
  proc: ChildProcess;
  stdout: string;
  exited: Promise<number | null>;
}

/** Starts an entry of the service (`src/main.ts`, the server; `src/worker.ts`, a worker) through tsx. */
export function startEntry(entry: 'src/main.ts' | 'src/worker.ts', env: Record<string, string>): Child {
  const proc = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const child: Child = { proc, stdout: '', exited: new Promise((r) => proc.on('close', (code) => r(code))) };
  proc.stdout!.on('data', (d) => (child.stdout += d));
  proc.stderr!.on('data', (d) => (child.stdout += d));
  return child;
}

/** A TCP port free on 127.0.0.1 at the moment of asking. */
export function freePort(): Promise<number> {
  return new Promise((done) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => done(port));
    });
  });
}

/** Polls `ok` every 50 ms until it holds or `ms` pass; returns its last answer. */
export async function until(ok: () => boolean | Promise<boolean>, ms = 90_000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) if (await ok()) return true;
  return ok();
}
