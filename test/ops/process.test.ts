import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENGINE, freshDatabase } from '../helpers.js';
import { ROOT, run } from '../support/run.js';

/** A port nobody listens on, found by listening on port 0 and letting it go. */
function freePort(): Promise<number> {
  return new Promise((done) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => done(port));
    });
  });
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Polls `ok` every 50 ms for up to `ms`: a real process answers when it is ready, not on a clock. */
async function until(ok: () => boolean | Promise<boolean>, ms = 30_000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
    if (await ok()) return true;
  }
  return ok();
}

const answers = (url: string) =>
  fetch(url).then(
    async (r) => (await r.text(), r.ok),
    () => false,
  );

describe('the service as a process (compiled, started by npm)', () => {
  let dir: string;
  let env: Record<string, string>;
  let drop = async () => {};
  /** The server started by npm: killed at the end should the test fail with it still running. */
  let serverPid = 0;
  before(
    async () => {
      // The scripts run dist/: build it if the sources changed since (a no-op when it is current).
      const build = await run(process.execPath, ['scripts/build-if-stale.mjs'], {});
      assert.equal(build.code, 0, build.stderr);
      dir = mkdtempSync(join(tmpdir(), 'campaign-process-'));
      env = { DATA_DIR: join(dir, 'data'), HOST: '127.0.0.1', RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'info' };
      if (ENGINE === 'postgres') {
        const fresh = await freshDatabase();
        // Only the URL is needed here: the child processes open their own connections.
        env.DATABASE_URL = fresh.url;
        drop = fresh.drop;
      } else {
        env.DATABASE_URL = `sqlite:${join(dir, 'campaign.db')}`;
      }
    },
    { timeout: 300_000 },
  );
  after(async () => {
    if (serverPid && alive(serverPid)) process.kill(serverPid, 'SIGKILL');
    await drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('npm start serves with plain node; the CLI scripts work beside it; SIGTERM to npm stops the server, no orphan', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const npm: ChildProcess = spawn('npm', ['start'], {
      cwd: ROOT,
      env: { ...process.env, ...env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    npm.stdout!.on('data', (d) => (stdout += d));
    npm.stderr!.resume();
    const npmExited = new Promise<void>((done) => npm.once('exit', () => done()));
    try {
      assert.ok(await until(() => answers(base + '/health/ready')), stdout);
      // pino writes the server's pid on each line.
      const listening = stdout.split('\n').find((l) => l.includes('Server listening'));
      assert.ok(listening, stdout);
      serverPid = JSON.parse(listening).pid;
      assert.notEqual(serverPid, npm.pid);
      const cmdline = readFileSync(`/proc/${serverPid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      // The heap bound of docs/operations.md, then the compiled entry: no loader.
      assert.deepEqual(cmdline.slice(1), ['--max-old-space-size=128', 'dist/main.js'], 'plain node on the compiled entry, no loader');
      // glibc's arenas bounded (docs/operations.md): `env` set it, then replaced itself with node.
      assert.ok(readFileSync(`/proc/${serverPid}/environ`, 'utf8').split('\0').includes('MALLOC_ARENA_MAX=2'));

      const created = await run('npm', ['run', '--silent', 'accounts:create', '--', '--name', 'Via npm'], env);
      assert.equal(created.code, 0, created.stderr);
      const lines = created.stdout.split('\n').filter(Boolean);
      assert.equal(lines.length, 1, created.stdout);
      const keys = JSON.parse(lines[0]);
      const ok = await fetch(base + '/contacts-type', { headers: { PublicKey: keys.public_key, SecretKey: keys.secret_key } });
      assert.equal(ok.status, 200);
      await ok.text();
      const rotated = await run('npm', ['run', '--silent', 'accounts:rotate', '--', '--user-id', String(keys.user_id)], env);
      assert.equal(rotated.code, 0, rotated.stderr);
      assert.equal(JSON.parse(rotated.stdout).user_id, keys.user_id);
      const migrated = await run('npm', ['run', '--silent', 'migrate'], env);
      assert.equal(migrated.code, 0, migrated.stderr);
      assert.deepEqual(JSON.parse(migrated.stdout), { migrated: true });
    } finally {
      npm.kill('SIGTERM');
      await npmExited;
      // An orphan would hold these pipes open and keep this test process alive.
      npm.stdout!.destroy();
      npm.stderr!.destroy();
    }
    assert.ok(await until(() => !alive(serverPid), 15_000), `server ${serverPid} still running after npm exited`);
    assert.equal(await answers(base + '/health/live'), false, 'the port is closed');
    assert.match(stdout, /"signal":"SIGTERM","msg":"shutting down"/);
  });

  describe('a port already in use', () => {
    let blocker: Server;
    let port: number;
    before(async () => {
      port = await freePort();
      blocker = createServer();
      await new Promise<void>((done) => blocker.listen(port, '127.0.0.1', done));
    });
    after(() => new Promise<void>((done) => blocker.close(() => done())));

    it('is one clear line on stderr and exit code 1, no stack trace', async () => {
      const r = await run(process.execPath, ['dist/main.js'], { ...env, PORT: String(port) });
      assert.equal(r.code, 1);
      assert.equal(r.stderr, `Port ${port} on 127.0.0.1 is already in use; set PORT to another port.\n`);
      assert.doesNotMatch(r.stdout, /EADDRINUSE|\n\s+at /);
    });

    it('makes npm start exit 1 with that line', async () => {
      const r = await run('npm', ['start'], { ...env, PORT: String(port) });
      assert.equal(r.code, 1);
      assert.ok(r.stderr.includes(`Port ${port} on 127.0.0.1 is already in use; set PORT to another port.\n`), r.stderr);
      assert.doesNotMatch(r.stderr, /EADDRINUSE|\n\s+at /);
    });
  });
});
