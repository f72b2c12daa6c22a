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
import type { MailLaneOptions } from '../src/messages/mail.lane.js';
import { MAIL_KINDS } from '../src/mail-kinds.js';
import type { MailKinds, Renderer } from '../src/messages/messages.kinds.js';
import { systemClock, testClock, type Clock } from '../src/util/clock.js';
import { OpenApiCheck, type OpenApiDocument } from './support/openapi-check.js';

/** The database the suite runs on: PostgreSQL when DATABASE_URL says so, else SQLite. */
export const ENGINE = /^postgres/.test(process.env.DATABASE_URL ?? '') ? 'postgres' : 'sqlite';

/**
 * A fresh, migrated database for one test file: in-memory SQLite (or the SQLite file `sqliteFile`,
 * which the caller removes), or a new PostgreSQL database created on the DATABASE_URL server and
 * dropped by `drop()`.
 */
export async function freshDatabase(sqliteFile?: string): Promise<{ database: Database; url: string; drop: () => Promise<void> }> {
  if (ENGINE === 'sqlite') {
    const url = sqliteFile ? `sqlite:${sqliteFile}` : 'sqlite::memory:';
    const database = createDb(url);
    await migrateToLatest(database.db);
    return { database, url, drop: () => database.close() };
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
  /** The app's dependencies (config, database, transport, clock, log), for engine calls and job runners. */
  deps: App['deps'];
  database: Database;
  config: Config;
  /** Where the engine reads the time: the test clock given to `setup`, else the system clock. */
  clock: Clock;
  /** Where the app's mail goes: the outbox folder of this test, or SMTP (see `setup`'s options). */
  transport: Transport;
  /** The SMTP sink the mail goes to, when `setup` was asked for one (optional so that tests may split it off). */
  sink?: SmtpSink | null;
  /** The kinds of mail `drainQueue` (and a running job runner) deliver. */
  kinds: MailKinds;
  /** Two accounts: `a` does the work, `b` is "another account". */
  a: Client;
  b: Client;
  anon: Client;
  close(): Promise<void>;
}

/** How `setup` builds the app; every option has a default that suits most tests. */
export interface SetupOptions {
  /** Environment variables over the test defaults (DATA_DIR, RATE_LIMIT_PER_MINUTE=0, PUBLIC_URL). */
  env?: Record<string, string>;
  /** A test clock (or its start time) the engine reads; default the system clock. */
  clock?: Clock | string;
  /** Start a real SMTP sink and send the mail there (`t.sink`); `close()` stops it. */
  sink?: boolean;
  /** Send the mail to this SMTP url (e.g. a sink the test started itself). */
  smtpUrl?: string;
  /** Send the mail through this transport, which stays the caller's to close. */
  transport?: Transport;
  /** The kinds of mail the job runner delivers (default the service's). */
  kinds?: MailKinds;
  /**
   * `manual` (default): no job runner; the test drives the queue with `drainQueue`. `running`: a
   * job runner with the scheduler and mail lanes polls in the background until `close()`.
   */
  jobs?: 'manual' | 'running';
  /** On SQLite, keep the database in this file rather than in memory (a test that reads its bytes). */
  sqliteFile?: string;
  /** Fastify's logger option (e.g. `{ level, stream }` to read the log). */
  logger?: AppInput['logger'];
  /** Runs before `app.ready()`, e.g. to register a route of the test's own. */
  beforeReady?: (app: App) => void;
}

/**
 * Builds the app on a fresh database with two accounts: the one set-up of the suite. `overrides`
 * are configuration values over what the environment gives; `opts` chooses the clock, where mail
 * goes, the mail kinds and whether a job runner runs (see `SetupOptions`).
 */
export async function setup(overrides: Partial<Config> = {}, opts: SetupOptions = {}): Promise<TestContext> {
  const { database, drop } = await freshDatabase(opts.sqliteFile);
  const dataDir = mkdtempSync(join(tmpdir(), 'campaign-test-'));
  const sink = opts.sink ? await SmtpSink.start() : null;
  const smtpUrl = sink?.url ?? opts.smtpUrl;
  const config = loadConfig(
    { DATA_DIR: dataDir, RATE_LIMIT_PER_MINUTE: '0', PUBLIC_URL: 'http://localhost:3000', ...opts.env },
    { appSecret: 'test-secret', ...(smtpUrl ? { smtpUrl } : {}), ...overrides },
  );
  const transport = opts.transport ?? createTransport(config);
  const clock = typeof opts.clock === 'string' ? testClock(opts.clock) : (opts.clock ?? systemClock);
  const app = await buildApp({ config, database, transport, clock, logger: opts.logger });
  opts.beforeReady?.(app);
  await app.ready();
  const kinds = opts.kinds ?? MAIL_KINDS;
  const jobs = opts.jobs === 'running' ? startJobs(app.deps, { lanes: ['scheduler', 'mail'], kinds }) : null;
  const a = new Client(app, await createAccount(database.db, 'Account A'));
  const b = new Client(app, await createAccount(database.db, 'Account B'));
  return {
    app,
    deps: app.deps,
    database,
    config,
    clock,
    transport,
    sink,
    kinds,
    a,
    b,
    anon: new Client(app, null),
    close: async () => {
      try {
        await jobs?.stop();
        await app.close();
        if (!opts.transport) await transport.close();
        await sink?.close();
        await drop();
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}

/** `setup()` with mail going to a real SMTP sink started for it; `close()` stops both. */
export async function setupWithSink(
  overrides: Partial<Config> = {},
  opts: Omit<SetupOptions, 'sink' | 'smtpUrl' | 'transport'> = {},
): Promise<TestContext & { sink: SmtpSink }> {
  return (await setup(overrides, { ...opts, sink: true })) as TestContext & { sink: SmtpSink };
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
  t: { app: App; kinds?: MailKinds },
  opts: MailLaneOptions & Pick<JobsOptions, 'kinds' | 'leaseMs' | 'stopTimeoutMs'> = {},
): Promise<number> {
  const { kinds = t.kinds, leaseMs, stopTimeoutMs, ...mail } = opts;
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
