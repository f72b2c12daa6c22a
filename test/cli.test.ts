import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp, type App } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDb, type Database } from '../src/db/index.js';
import { ENGINE, freshDatabase } from './helpers.js';
import { ROOT, run } from './support/run.js';

/**
 * The CLI from its TypeScript source (tsx's loader on this Node). The npm scripts run the compiled
 * `dist/cli.js`; test/ops/process.test.ts runs them that way.
 */
const cli = (args: string[], env: Record<string, string>) => run(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], env);

async function freePort(): Promise<number> {
  return new Promise((done) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => done(port));
    });
  });
}

/** A database for the child processes: a temp SQLite file, or a fresh PostgreSQL database. */
async function childDatabase(dir: string): Promise<{ url: string; drop: () => Promise<void> }> {
  if (ENGINE === 'sqlite') return { url: `sqlite:${join(dir, 'campaign.db')}`, drop: async () => {} };
  const { url, drop } = await freshDatabase();
  return { url, drop };
}

describe('accounts CLI', () => {
  let dir: string;
  let db: { url: string; drop: () => Promise<void> };
  let env: Record<string, string>;
  let database: Database;
  let app: App;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'campaign-cli-'));
    db = await childDatabase(dir);
    env = { DATABASE_URL: db.url, DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'silent' };
  });
  after(async () => {
    await app?.close();
    await database?.close();
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * The app on the CLI's database, opened once the CLI created it. This file keeps a set-up of its
   * own rather than `setup()`: the database is the one the CLI child processes create and migrate,
   * and the accounts are the ones they print.
   */
  async function api(): Promise<App> {
    if (!app) {
      database = createDb(db.url);
      app = await buildApp({
        config: loadConfig({ DATA_DIR: join(dir, 'data'), RATE_LIMIT_PER_MINUTE: '0' }, { appSecret: 'x' }),
        database,
      });
      await app.ready();
    }
    return app;
  }
  const status = async (keys: { public_key: string; secret_key: string }) =>
    (
      await (
        await api()
      ).inject({ method: 'GET', url: '/contacts-type', headers: { publickey: keys.public_key, secretkey: keys.secret_key } })
    ).statusCode;

  let created: { user_id: number; public_key: string; secret_key: string };

  it('accounts:create prints exactly one JSON line with user_id, public_key and secret_key', async () => {
    const r = await cli(['accounts:create', '--name', 'Acme'], env);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n').filter(Boolean);
    assert.equal(lines.length, 1, r.stdout);
    created = JSON.parse(lines[0]);
    assert.deepEqual(Object.keys(created), ['user_id', 'public_key', 'secret_key']);
    assert.ok(Number.isInteger(created.user_id));
    assert.match(created.public_key, /^pk_/);
    assert.match(created.secret_key, /^sk_/);
  });

  it('issues keys that authenticate', async () => {
    assert.equal(await status(created), 200);
  });

  it('accounts:rotate prints new keys; the old ones fail at once', async () => {
    const r = await cli(['accounts:rotate', '--user-id', String(created.user_id)], env);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n').filter(Boolean);
    assert.equal(lines.length, 1);
    const fresh = JSON.parse(lines[0]);
    assert.equal(fresh.user_id, created.user_id);
    assert.notEqual(fresh.secret_key, created.secret_key);
    assert.equal(await status(created), 401);
    assert.equal(await status(fresh), 200);
  });

  it('accounts:create --owner-email also prints a one-time link where the owner sets a name and password', async () => {
    const r = await cli(['accounts:create', '--name', 'Owned', '--owner-email', 'Owner@Example.com'], env);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n').filter(Boolean);
    assert.equal(lines.length, 1, r.stdout);
    const made = JSON.parse(lines[0]);
    assert.deepEqual(Object.keys(made), ['user_id', 'public_key', 'secret_key', 'owner_link']);
    assert.match(made.owner_link, /^http:\/\/localhost:3000\/app\/invite\/\d+\.[A-Za-z0-9_-]{43}$/);
    const token = made.owner_link.split('/').pop();
    const inject = async (url: string, payload: object) =>
      (await (await api()).inject({ method: 'POST', url, payload, headers: { 'content-type': 'application/json' } })).json();
    const password = 'the owner password';
    assert.deepEqual(await inject('/session/accept-invite', { token, name: 'Owner', password }), {
      status: 'success',
      message: 'Accepted Successfully',
    });
    assert.deepEqual(await inject('/session/accept-invite', { token, name: 'Owner', password }), {
      status: 'failed',
      errors: 'This link is no longer valid',
    });
    const signedIn = await inject('/session/sign-in', { email: 'owner@example.com', password });
    assert.equal(signedIn.message.user.role, 'owner');
    // The address is taken now: a second account with it is not made at all.
    const again = await cli(['accounts:create', '--name', 'Twice', '--owner-email', 'owner@example.com'], env);
    assert.notEqual(again.code, 0);
    assert.equal(again.stdout, '');
  });

  it('exits non-zero with a message on stderr and nothing on stdout for bad usage', async () => {
    // Each run starts a Node process (~0.7 s), so two at a time and one case per kind of mistake.
    const cases = [
      ['accounts:frobnicate'],
      ['accounts:create', '--name', '   '],
      ['accounts:create', '--bogus', 'x'],
      ['accounts:rotate', '--user-id', 'abc'],
      ['accounts:rotate', '--user-id', '999999'],
      ['accounts:create', '--name', 'X', '--owner-email', 'not-an-address'],
    ];
    for (let i = 0; i < cases.length; i += 2) {
      const runs = await Promise.all(cases.slice(i, i + 2).map(async (args) => ({ args, r: await cli(args, env) })));
      for (const { args, r } of runs) {
        assert.notEqual(r.code, 0, args.join(' '));
        assert.equal(r.stdout, '', args.join(' '));
        assert.ok(r.stderr.trim().length > 0, args.join(' '));
      }
    }
  });

  it('does not create a database for bad usage', { skip: ENGINE !== 'sqlite' }, async () => {
    const other = mkdtempSync(join(tmpdir(), 'campaign-cli-'));
    try {
      const r = await cli(['accounts:create'], { DATABASE_URL: `sqlite:${join(other, 'x.db')}`, DATA_DIR: join(other, 'data') });
      assert.equal(r.code, 2);
      assert.ok(!existsSync(join(other, 'x.db')));
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});

describe('first start (src/main.ts)', () => {
  /** Starts the server, waits until it answers, and returns its output so far and a stop(). */
  async function start(env: Record<string, string>) {
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    const base = `http://127.0.0.1:${port}`;
    // Generous: tsx compiles the whole service first, slow on a busy machine.
    const deadline = Date.now() + 90_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`server exited: ${stderr}`);
      try {
        await fetch(base + '/contacts-type');
        break;
      } catch {
        if (Date.now() > deadline) {
          // A child left running would hold this test file open for ever.
          child.kill('SIGKILL');
          throw new Error(`server did not start: ${stderr}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    return {
      base,
      output: () => stdout,
      stop: async () => {
        child.kill('SIGTERM');
        return exited;
      },
    };
  }

  let dir: string;
  let db: { url: string; drop: () => Promise<void> };
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'campaign-main-'));
    db = await childDatabase(dir);
  });
  after(async () => {
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints the bootstrap keys once on an empty database; they work; a second start prints none', async () => {
    // SQLite: no DATABASE_URL, so the default file in DATA_DIR is used.
    const env: Record<string, string> = { DATA_DIR: join(dir, 'data'), RATE_LIMIT_PER_MINUTE: '0' };
    if (ENGINE === 'postgres') env.DATABASE_URL = db.url;
    else env.DATABASE_URL = '';
    const first = await start(env);
    let keys: { user_id: number; public_key: string; secret_key: string };
    try {
      const out = first.output();
      assert.match(out, /First start: created an account/);
      const line = out.split('\n').find((l) => l.includes('"public_key"'));
      assert.ok(line, out);
      keys = JSON.parse(line);
      assert.deepEqual(Object.keys(keys), ['user_id', 'public_key', 'secret_key']);
      const ok = await fetch(first.base + '/contacts-type', { headers: { PublicKey: keys.public_key, SecretKey: keys.secret_key } });
      assert.equal(ok.status, 200);
      assert.deepEqual(await ok.json(), { status: 'success', message: { contactTypes: [] } });
      const anon = await fetch(first.base + '/contacts-type');
      assert.equal(anon.status, 401);
    } finally {
      assert.equal(await first.stop(), 0, 'graceful shutdown exits 0');
    }
    if (ENGINE === 'sqlite') {
      assert.ok(readdirSync(join(dir, 'data')).includes('campaign.db'));
      assert.ok(readdirSync(join(dir, 'data')).includes('app-secret'));
    }

    const second = await start(env);
    try {
      assert.doesNotMatch(second.output(), /First start|public_key/);
      const again = await fetch(second.base + '/contacts-type', { headers: { PublicKey: keys.public_key, SecretKey: keys.secret_key } });
      assert.equal(again.status, 200);
      await again.text(); // an unread body keeps the connection busy and delays the shutdown
    } finally {
      await second.stop();
    }
  });

  it('with OWNER_EMAIL, prints the owner’s one-time link with the keys', async () => {
    const fresh = await childDatabase(mkdtempSync(join(tmpdir(), 'campaign-owner-')));
    const dataDir = mkdtempSync(join(tmpdir(), 'campaign-owner-data-'));
    try {
      const env: Record<string, string> = { DATA_DIR: dataDir, RATE_LIMIT_PER_MINUTE: '0', OWNER_EMAIL: 'first@example.com' };
      env.DATABASE_URL = ENGINE === 'postgres' ? fresh.url : '';
      const server = await start(env);
      try {
        const out = server.output();
        const keys = JSON.parse(out.split('\n').find((l) => l.includes('"public_key"'))!);
        assert.deepEqual(Object.keys(keys), ['user_id', 'public_key', 'secret_key', 'owner_link']);
        assert.match(
          out,
          /The owner \(first@example\.com\) sets a name and password at this link, once, within 7 days: http:\/\/localhost:\d+\/app\/invite\//,
        );
        const accept = await fetch(server.base + '/session/accept-invite', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ token: keys.owner_link.split('/').pop(), name: 'First', password: 'first owner password' }),
        });
        assert.deepEqual(await accept.json(), { status: 'success', message: 'Accepted Successfully' });
      } finally {
        await server.stop();
      }
    } finally {
      await fresh.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
