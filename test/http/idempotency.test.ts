import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createDb, type Database } from '../../src/db/index.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { ok } from '../../src/http/envelope.js';
import { KEY_IN_PROGRESS, KEY_INVALID } from '../../src/http/idempotency.js';
import { OkText, responses } from '../../src/http/schemas.js';
import { createAccount } from '../../src/modules/accounts/accounts.service.js';
import { testClock } from '../../src/util/clock.js';
import { Client, ENGINE, freshDatabase, setup, type Response, type TestContext } from '../helpers.js';
import { multipart } from '../modules/contacts-csv.helpers.js';

const HOUR = 60 * 60 * 1000;
const key = (k: string) => ({ 'idempotency-key': k });
const reused = { status: 'failed', errors: 'Idempotency-Key reused with a different request' };
const invalid = { status: 'failed', errors: { 'Idempotency-Key': [KEY_INVALID] } };

/** The account's contact types, by name. */
async function typeNames(c: Client): Promise<string[]> {
  const r = await c.get('/contacts-type');
  assert.equal(r.status, 200);
  return r.body.message.contactTypes.map((t: { name: string }) => t.name).sort();
}

function addType(c: Client, name: string, k?: string): Promise<Response> {
  return c.request('POST', '/contacts-type/add', { form: { name }, headers: k === undefined ? {} : key(k) });
}

/** Asserts that `again` is `first` given again: same status and body, marked as a replay. */
function assertReplay(again: Response, first: Response): void {
  assert.equal(again.status, first.status);
  assert.deepEqual(again.body, first.body);
  assert.equal(again.headers['idempotent-replayed'], 'true');
  assert.equal(again.headers['content-type'], first.headers['content-type']);
}

/** A promise and the function that settles it. */
function latch(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/**
 * Registers two routes of this test's own on `app` (before it is ready), declared like any keyed
 * POST: one whose handler waits until the test lets it go (a request still running, held for as
 * long as needed), one that fails with a 500 on its first call and succeeds afterwards.
 */
function addTestRoutes(app: App) {
  const held = { entered: latch(), release: latch(), runs: 0 };
  const flaky = { runs: 0 };
  app.post('/test/held', { schema: { summary: 'Held until released', response: responses(OkText, 409, 422) } }, async () => {
    held.runs++;
    held.entered.open();
    await held.release.promise;
    return ok(`run ${held.runs}`);
  });
  app.post('/test/flaky', { schema: { summary: 'Fails once', response: responses(OkText, 422) } }, async () => {
    if (++flaky.runs === 1) throw new Error('a fault of the service');
    return ok(`run ${flaky.runs}`);
  });
  return { held, flaky };
}

/**
 * The app with the test routes on a given `database`. The restart test keeps this set-up of its
 * own rather than `setup()`: it needs two apps, one after the other, on the same database.
 */
async function appWithTestRoutes(database: Database) {
  const dataDir = mkdtempSync(join(tmpdir(), 'campaign-idem-'));
  const config = loadConfig(
    { DATA_DIR: dataDir, RATE_LIMIT_PER_MINUTE: '0', PUBLIC_URL: 'http://localhost:3000' },
    { appSecret: 'test-secret' },
  );
  const app = await buildApp({ config, database });
  addTestRoutes(app);
  await app.ready();
  return {
    app,
    close: async () => {
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

describe('idempotency keys', () => {
  let t: TestContext;
  const clock = testClock();
  before(async () => {
    t = await setup({}, { clock });
  });
  after(() => t.close());

  it('replays the first answer to the same request, and does it once', async () => {
    const first = await addType(t.a, 'Replayed', 'k-replay');
    assert.equal(first.status, 200);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    assert.deepEqual(first.body, { status: 'success', message: 'Added Successfully', id: first.body.id });
    const again = await addType(t.a, 'Replayed', 'k-replay');
    assertReplay(again, first);
    assert.deepEqual(
      (await typeNames(t.a)).filter((n) => n === 'Replayed'),
      ['Replayed'],
    );
  });

  it('refuses the same key on another request with 422 and the text saying so', async () => {
    assert.equal((await addType(t.a, 'Original', 'k-reuse')).status, 200);
    const other = await addType(t.a, 'Another', 'k-reuse');
    assert.equal(other.status, 422);
    assert.deepEqual(other.body, reused);
    // Another URL (here a query string) with the same key and body is another request too.
    const elsewhere = await t.a.request('POST', '/contacts-type/add', {
      form: { name: 'Original' },
      query: { x: 1 },
      headers: key('k-reuse'),
    });
    assert.equal(elsewhere.status, 422);
    assert.deepEqual(elsewhere.body, reused);
    assert.ok(!(await typeNames(t.a)).includes('Another'));
  });

  it('keeps a 4xx answer and replays it', async () => {
    const first = await t.a.request('POST', '/contacts-type/update', { form: { id: 999999, name: 'Nope' }, headers: key('k-404') });
    assert.equal(first.status, 404);
    assertReplay(await t.a.request('POST', '/contacts-type/update', { form: { id: 999999, name: 'Nope' }, headers: key('k-404') }), first);
  });

  it('refuses a malformed key with 422 before doing anything', async () => {
    for (const bad of ['', 'x'.repeat(256), 'with space', 'tab\there', 'caf\u00e9']) {
      const r = await addType(t.a, `Bad ${bad.length}`, bad);
      assert.equal(r.status, 422, JSON.stringify(bad));
      assert.deepEqual(r.body, invalid);
    }
    assert.ok(!(await typeNames(t.a)).some((n) => n.startsWith('Bad ')));
    const longest = await addType(t.a, 'Longest key', '!'.repeat(200) + '~'.repeat(55));
    assert.equal(longest.status, 200);
  });

  it('leaves requests without the header, GETs and DELETEs as they were', async () => {
    const plain = await addType(t.a, 'Plain');
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['idempotent-replayed'], undefined);
    assert.equal((await addType(t.a, 'Plain')).status, 422); // the name is taken: it ran again
    const list = await t.a.request('GET', '/contacts-type', { headers: key('') });
    assert.equal(list.status, 200);
    const del = await t.a.request('DELETE', '/contacts-type/delete', { query: { contact_type_id: plain.body.id }, headers: key('') });
    assert.equal(del.status, 200);
  });

  it('keeps keys per account: another account with the same key is independent', async () => {
    const a = await addType(t.a, 'Shared key A', 'k-shared');
    const b = await addType(t.b, 'Shared key B', 'k-shared');
    assert.equal(a.status, 200);
    assert.equal(b.status, 200);
    assert.equal(b.headers['idempotent-replayed'], undefined);
    assert.notEqual(a.body.id, b.body.id);
    assert.ok((await typeNames(t.b)).includes('Shared key B'));
    assertReplay(await addType(t.b, 'Shared key B', 'k-shared'), b);
  });

  it('forgets a key 24 hours after its first use', async () => {
    const first = await addType(t.a, 'Expiring', 'k-expiry');
    clock.advance(24 * HOUR - 1);
    assertReplay(await addType(t.a, 'Expiring', 'k-expiry'), first);
    clock.advance(1);
    // Expired: the key is free again, for this request or another.
    const fresh = await addType(t.a, 'After expiry', 'k-expiry');
    assert.equal(fresh.status, 200);
    assert.equal(fresh.headers['idempotent-replayed'], undefined);
    assertReplay(await addType(t.a, 'After expiry', 'k-expiry'), fresh);
  });

  it('works alike for urlencoded, JSON and multipart bodies; the same fields are the same request', async () => {
    const json = await t.a.request('POST', '/contacts-type/add', { json: { name: 'As JSON' }, headers: key('k-json') });
    assert.equal(json.status, 200);
    assertReplay(await t.a.request('POST', '/contacts-type/add', { json: { name: 'As JSON' }, headers: key('k-json') }), json);
    // The same field sent urlencoded is the same request.
    assertReplay(await addType(t.a, 'As JSON', 'k-json'), json);
    assert.deepEqual(
      await t.a.request('POST', '/contacts-type/add', { json: { name: 'Other JSON' }, headers: key('k-json') }).then((r) => r.body),
      reused,
    );

    const form = multipart({ name: 'As multipart' });
    const mp = await t.a.request('POST', '/contacts-type/add', { ...form, headers: { ...form.headers, ...key('k-mp') } });
    assert.equal(mp.status, 200);
    // Another boundary, the same fields: a replay.
    const again = multipart({ name: 'As multipart' });
    assert.notEqual(again.headers['content-type'], form.headers['content-type']);
    assertReplay(await t.a.request('POST', '/contacts-type/add', { ...again, headers: { ...again.headers, ...key('k-mp') } }), mp);
    const other = multipart({ name: 'Other multipart' });
    const refused = await t.a.request('POST', '/contacts-type/add', { ...other, headers: { ...other.headers, ...key('k-mp') } });
    assert.deepEqual(refused.body, reused);
    const names = await typeNames(t.a);
    assert.deepEqual(
      names.filter((n) => /JSON|multipart/.test(n)),
      ['As JSON', 'As multipart'],
    );
  });

  it('replays a CSV import (a streamed upload) once, whatever the boundary, and refuses another file', async () => {
    const typeId = (await addType(t.a, 'CSV target')).body.id;
    const csv = 'email,country\nada@example.com,101\ngrace@example.com,101\n';
    const send = (content: string) => {
      const body = multipart({ contact_type_id: typeId }, { content });
      return t.a.request('POST', '/contacts/upload-csv', { ...body, headers: { ...body.headers, ...key('k-csv') } });
    };
    const first = await send(csv);
    assert.equal(first.status, 200);
    assert.equal(first.body.summary.created, 2);
    assertReplay(await send(csv), first);
    assert.deepEqual((await send(csv.replace('grace', 'alan'))).body, reused);
    const list = await t.a.get('/contacts/list');
    const emails = list.body.message.contacts
      .filter((c: { contact_type_id: number }) => c.contact_type_id === typeId)
      .map((c: { email: string }) => c.email)
      .sort();
    assert.deepEqual(emails, ['ada@example.com', 'grace@example.com']);
  });

  it('gives ten concurrent identical creates one effect: one answer, the others a replay or 409', async () => {
    const answers = await Promise.all(Array.from({ length: 10 }, () => addType(t.a, 'Concurrent', 'k-concurrent')));
    const done = answers.filter((r) => r.status === 200);
    const busy = answers.filter((r) => r.status === 409);
    assert.equal(done.length + busy.length, 10, answers.map((r) => r.status).join());
    assert.equal(done.filter((r) => r.headers['idempotent-replayed'] === undefined).length, 1);
    for (const r of done) assert.deepEqual(r.body, done[0].body);
    for (const r of busy) assert.deepEqual(r.body, { status: 'failed', errors: KEY_IN_PROGRESS });
    assert.deepEqual(
      (await typeNames(t.a)).filter((n) => n === 'Concurrent'),
      ['Concurrent'],
    );
    assertReplay(await addType(t.a, 'Concurrent', 'k-concurrent'), done[0]);
  });
});

describe('idempotency keys while the first request runs, when it fails, and across a restart', () => {
  let t: TestContext;
  let routes: ReturnType<typeof addTestRoutes>;
  let c: Client;
  const clock = testClock();
  before(async () => {
    t = await setup({}, { clock, beforeReady: (app) => void (routes = addTestRoutes(app)) });
    c = t.a;
  });
  after(() => t.close());

  it('answers 409 while the first request still runs, then replays its answer', async () => {
    const first = c.request('POST', '/test/held', { headers: key('k-held') });
    await routes.held.entered.promise;
    const busy = await c.request('POST', '/test/held', { headers: key('k-held') });
    assert.equal(busy.status, 409);
    assert.deepEqual(busy.body, { status: 'failed', errors: KEY_IN_PROGRESS });
    assert.equal(busy.headers['retry-after'], '1');
    routes.held.release.open();
    const answer = await first;
    assert.deepEqual(answer.body, { status: 'success', message: 'run 1' });
    assertReplay(await c.request('POST', '/test/held', { headers: key('k-held') }), answer);
    assert.equal(routes.held.runs, 1);
  });

  it('takes over a key still running long after its claim (its process died), and keeps the new answer', async () => {
    routes.held.entered = latch();
    routes.held.release = latch();
    const runs = routes.held.runs;
    const stuck = c.request('POST', '/test/held', { headers: key('k-stuck') });
    await routes.held.entered.promise;
    clock.advance(10 * 60 * 1000 - 1);
    assert.equal((await c.request('POST', '/test/held', { headers: key('k-stuck') })).status, 409);
    clock.advance(1);
    // Past ten minutes the key counts as abandoned: this request takes it over and runs.
    routes.held.entered = latch();
    const takeover = c.request('POST', '/test/held', { headers: key('k-stuck') });
    await routes.held.entered.promise;
    routes.held.release.open();
    const [late, taken] = await Promise.all([stuck, takeover]);
    assert.equal(routes.held.runs, runs + 2);
    assert.equal(late.status, 200);
    // The late first answer no longer holds the key: the one kept is the second's.
    assertReplay(await c.request('POST', '/test/held', { headers: key('k-stuck') }), taken);
  });

  it('keeps no 5xx answer: the retry runs again, and its answer is kept', async () => {
    const failed = await c.request('POST', '/test/flaky', { headers: key('k-flaky') });
    assert.equal(failed.status, 500);
    assert.deepEqual(failed.body, { status: 'failed', errors: 'Internal Server Error' });
    const retried = await c.request('POST', '/test/flaky', { headers: key('k-flaky') });
    assert.equal(retried.status, 200);
    assert.equal(retried.headers['idempotent-replayed'], undefined);
    assert.deepEqual(retried.body, { status: 'success', message: 'run 2' });
    assertReplay(await c.request('POST', '/test/flaky', { headers: key('k-flaky') }), retried);
    assert.equal(routes.flaky.runs, 2);
  });
});

describe('idempotency keys survive a restart', () => {
  it('a new app on the same database replays the answer', async () => {
    let url: string;
    let first: Database;
    let cleanup: () => Promise<void>;
    if (ENGINE === 'sqlite') {
      const dir = mkdtempSync(join(tmpdir(), 'campaign-idem-db-'));
      url = `sqlite:${join(dir, 'restart.db')}`;
      first = createDb(url);
      await migrateToLatest(first.db);
      cleanup = async () => rmSync(dir, { recursive: true, force: true });
    } else {
      const fresh = await freshDatabase();
      ({ url, database: first } = fresh);
      cleanup = fresh.drop;
    }
    const keys = await createAccount(first.db, 'Restarted');
    const before = await appWithTestRoutes(first);
    const answer = await addType(new Client(before.app, keys), 'Before restart', 'k-restart');
    assert.equal(answer.status, 200);
    await before.close();
    if (ENGINE === 'sqlite') await first.close();

    const second = createDb(url);
    const afterRestart = await appWithTestRoutes(second);
    try {
      const c = new Client(afterRestart.app, keys);
      assertReplay(await addType(c, 'Before restart', 'k-restart'), answer);
      assert.deepEqual(await typeNames(c), ['Before restart']);
    } finally {
      await afterRestart.close();
      await second.close();
      await cleanup();
    }
  });
});

describe('expired idempotency keys', () => {
  let t: TestContext;
  const clock = testClock();
  before(async () => {
    t = await setup({}, { clock });
  });
  after(() => t.close());

  it('are deleted by the claims themselves, a batch every hundred claims', async () => {
    const rows = async () =>
      (await t.database.db.selectFrom('idempotency_keys').select('key').where('user_id', '=', t.a.keys!.user_id).execute()).map(
        (r) => r.key,
      );
    for (let i = 0; i < 30; i++) assert.equal((await addType(t.a, `Old ${i}`, `old-${i}`)).status, 200);
    assert.equal((await rows()).length, 30);
    clock.advance(24 * HOUR);
    // The 100th claim of the app (here the 70th below) first deletes the expired keys among the oldest.
    for (let i = 0; i < 70; i++) assert.equal((await addType(t.a, `New ${i}`, `new-${i}`)).status, 200);
    const left = await rows();
    assert.equal(left.filter((k) => k.startsWith('old-')).length, 0, 'the expired keys are gone');
    assert.equal(left.filter((k) => k.startsWith('new-')).length, 70);
  });
});
