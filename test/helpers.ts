import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import qs from 'qs';
import { buildApp, type App } from '../src/app.js';
import type { AppInput } from '../src/deps.js';
import { loadConfig, type Config } from '../src/config.js';
import { createDb, type Database } from '../src/db/index.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createAccount, type IssuedKeys } from '../src/modules/accounts/accounts.service.js';
import type { Transport } from '../src/delivery/transport.js';
import { createTransport } from '../src/delivery/transports.js';
import { SmtpSink } from './support/smtp-sink.js';
import { startJobs, type JobsOptions } from '../src/lanes.js';
import type { MailLaneOptions } from '../src/jobs/mail.lane.js';
import { MAIL_KINDS } from '../src/mail-kinds.js';
import type { MailKinds, Renderer } from '../src/queue/queue.types.js';
import type { Clock } from '../src/util/clock.js';
import { OpenApiCheck, type OpenApiDocument } from './support/openapi-check.js';

/** The database the suite runs on: PostgreSQL when DATABASE_URL says so, else SQLite. */
export const ENGINE = /^postgres/.test(process.env.DATABASE_URL ?? '') ? 'postgres' : 'sqlite';

/**
 * A fresh, migrated database for one test file: in-memory SQLite, or a new PostgreSQL database
 * created on the DATABASE_URL server and dropped by `drop()`.
 */
export async function freshDatabase(): Promise<{ database: Database; url: string; drop: () => Promise<void> }> {
  if (ENGINE === 'sqlite') {
    const database = createDb('sqlite::memory:');
    await migrateToLatest(database.db);
    return { database, url: 'sqlite::memory:', drop: () => database.close() };
  }
  const adminUrl = process.env.DATABASE_URL!;
  const name = `t_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = '/' + name;
  const database = createDb(url.toString(), { server: true });
  await migrateToLatest(database.db);
  return {
    database,
    url: url.toString(),
    drop: async () => {
      await database.close();
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/**
 * Runs a change to accounts made in this process, then waits until `database` has seen it
 * (`database.version` moved on): on PostgreSQL the accounts trigger's notification arrives on a
 * connection of its own a moment after the commit; on SQLite the version moves at once. Without a
 * version nothing is remembered, so there is nothing to wait for. Gives up after a second, leaving
 * the test to fail on the stale key.
 */
export async function changeAccounts<T>(database: Database, change: () => Promise<T>): Promise<T> {
  const before = database.version?.();
  const result = await change();
  for (let i = 0; i < 200 && before !== undefined && database.version?.() === before; i++) await new Promise((r) => setTimeout(r, 5));
  return result;
}

export interface Response {
  status: number;
  headers: Record<string, unknown>;
  body: any;
  text: string;
}

const checks = new WeakMap<App, OpenApiCheck>();

/**
 * Checks a response of the suite against the app's own OpenAPI document (see OpenApiCheck), so
 * every test that goes through `Client` also checks the document.
 */
export function checkAgainstDocument(
  app: App,
  method: string,
  url: string,
  res: { statusCode: number; headers: Record<string, unknown>; rawPayload: Buffer },
): void {
  let check = checks.get(app);
  if (!check) {
    check = new OpenApiCheck(app.swagger() as unknown as OpenApiDocument);
    checks.set(app, check);
  }
  check.check(method, url, { status: res.statusCode, headers: res.headers, rawPayload: res.rawPayload });
}

/** The 401 body of a call without either key header. */
export const MISSING_KEYS = {
  status: 'failed',
  errors: { PublicKey: ['The public key field is required.'], SecretKey: ['The secret key field is required.'] },
};

/** Asserts that each `[method, path]`, called without keys, answers 401 with `MISSING_KEYS`. */
export async function assertNeedsKeys(anon: Client, routes: Array<[method: string, path: string]>): Promise<void> {
  for (const [method, path] of routes) {
    const r = await anon.request(method, path);
    assert.equal(r.status, 401, `${method} ${path}`);
    assert.deepEqual(r.body, MISSING_KEYS, `${method} ${path}`);
  }
}

/** A client for one account: requests go through `app.inject` with its keys; each answer is checked against the document. */
export class Client {
  constructor(
    readonly app: App,
    readonly keys: IssuedKeys | null,
  ) {}

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return this.keys ? { publickey: this.keys.public_key, secretkey: this.keys.secret_key, ...extra } : extra;
  }

  async request(
    method: string,
    path: string,
    opts: { query?: object; form?: object; json?: object; headers?: Record<string, string>; payload?: any } = {},
  ): Promise<Response> {
    const url = opts.query ? `${path}?${qs.stringify(opts.query)}` : path;
    let payload = opts.payload;
    const headers = this.headers(opts.headers);
    if (opts.form) {
      payload = qs.stringify(opts.form);
      headers['content-type'] = 'application/x-www-form-urlencoded';
    } else if (opts.json) {
      payload = JSON.stringify(opts.json);
      headers['content-type'] = 'application/json';
    }
    const res = await this.app.inject({ method: method as any, url, payload, headers });
    checkAgainstDocument(this.app, method, url, res);
    let body: any;
    try {
      body = res.json();
    } catch {
      body = undefined;
    }
    return { status: res.statusCode, headers: res.headers, body, text: res.body };
  }

  get(path: string, query?: object) {
    return this.request('GET', path, { query });
  }
  post(path: string, form: object = {}, query?: object) {
    return this.request('POST', path, { form, query });
  }
  delete(path: string, query?: object) {
    return this.request('DELETE', path, { query });
  }
}

export interface TestContext {
  app: App;
  database: Database;
  config: Config;
  /** Where the app's mail goes: the outbox folder of this test, or SMTP (see `setup`'s options). */
  transport: Transport;
  /** Two accounts: `a` does the work, `b` is "another account". */
  a: Client;
  b: Client;
  anon: Client;
  close(): Promise<void>;
}

/**
 * Builds the app on a fresh database with two accounts. Mail goes to the test's outbox folder,
 * or to `opts.smtpUrl` (e.g. an SmtpSink's url), or through `opts.transport`; the engine reads
 * `opts.clock` (e.g. a `testClock()`), else the system clock; `opts.logger` is Fastify's logger option.
 */
export async function setup(
  overrides: Partial<Config> = {},
  opts: { smtpUrl?: string; transport?: Transport; clock?: Clock; logger?: AppInput['logger'] } = {},
): Promise<TestContext> {
  const { database, drop } = await freshDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'campaign-test-'));
  const smtp = opts.smtpUrl ? { smtpUrl: opts.smtpUrl } : {};
  const config = loadConfig(
    { DATA_DIR: dataDir, RATE_LIMIT_PER_MINUTE: '0', PUBLIC_URL: 'http://localhost:3000' },
    { appSecret: 'test-secret', ...smtp, ...overrides },
  );
  const transport = opts.transport ?? createTransport(config);
  const app = await buildApp({ config, database, transport, clock: opts.clock, logger: opts.logger });
  await app.ready();
  const a = new Client(app, await createAccount(database.db, 'Account A'));
  const b = new Client(app, await createAccount(database.db, 'Account B'));
  return {
    app,
    database,
    config,
    transport,
    a,
    b,
    anon: new Client(app, null),
    close: async () => {
      await app.close();
      if (!opts.transport) await transport.close();
      await drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** `setup()` with mail going to a real SMTP sink started for it; `close()` stops both. */
export async function setupWithSink(
  overrides: Partial<Config> = {},
  opts: { clock?: Clock } = {},
): Promise<TestContext & { sink: SmtpSink }> {
  const sink = await SmtpSink.start();
  const t = await setup(overrides, { smtpUrl: sink.url, ...opts });
  return {
    ...t,
    sink,
    close: async () => {
      await t.close();
      await sink.close();
    },
  };
}

/** The kinds of mail of the service, with the renderer of one kind replaced (a test's own rendering). */
export function kindsRendering(name: string, render: Renderer, kinds: MailKinds = MAIL_KINDS): MailKinds {
  return new Map(kinds).set(name, { ...kinds.get(name)!, render });
}

/**
 * Runs the mail queue of the test's app until nothing is due: a job runner with the scheduler and
 * mail lanes on the app's dependencies (its clock, transport and database) ticks until a tick
 * claims nothing, then stops. Mail that waits for a later attempt stays queued (move the test
 * clock on and drain again). Returns how many messages were claimed.
 */
export async function drainQueue(
  t: { app: App },
  opts: MailLaneOptions & Pick<JobsOptions, 'kinds' | 'leaseMs' | 'stopTimeoutMs'> = {},
): Promise<number> {
  const { kinds, leaseMs, stopTimeoutMs, ...mail } = opts;
  const worker = startJobs(t.app.deps, { lanes: ['scheduler', 'mail'], kinds, leaseMs, stopTimeoutMs, mail, loop: false });
  let total = 0;
  try {
    for (let n = await worker.tick(); n > 0; n = await worker.tick()) total += n;
  } finally {
    await worker.stop();
  }
  return total;
}

/** The envelope of a field-error failure. */
export function fieldErrors(errors: Record<string, string[]>) {
  return { status: 'failed', errors };
}

/** Factories for prerequisites. */
export const make = {
  async contactType(c: Client, name = `Type ${randomBytes(3).toString('hex')}`): Promise<number> {
    const r = await c.post('/contacts-type/add', { name });
    if (r.status !== 200) throw new Error('contactType factory: ' + r.text);
    return r.body.id;
  },
  async contact(c: Client, fields: Record<string, unknown> = {}): Promise<number> {
    const contact_type_id = fields.contact_type_id ?? (await make.contactType(c));
    const r = await c.post('/contacts/add', {
      contact_type_id,
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: `ada.${randomBytes(4).toString('hex')}@example.com`,
      country: 101,
      ...fields,
    });
    if (r.status !== 200) throw new Error('contact factory: ' + r.text);
    return r.body.id;
  },
};
