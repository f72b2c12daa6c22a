/**
 * A webhook endpoint's signing secret is kept sealed with the app secret, and the webhook lane
 * opens it to sign; the credentials in an endpoint's URL are masked in every answer, while
 * deliveries go to the URL as saved.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { sql } from 'kysely';
import { migrateToLatest } from '../../../src/db/migrate.js';
import { startJobs } from '../../../src/lanes.js';
import { endpointDisabledMail } from '../../../src/modules/webhooks/webhooks.mail.js';
import { maskedUrl } from '../../../src/events/webhooks.address.js';
import { seal, unseal, WEBHOOK_SECRET } from '../../../src/util/seal.js';
import { isoMicros } from '../../../src/util/time.js';
import { Client, setup, type TestContext } from '../../helpers.js';
import { assertSigned, createEndpoint, emit, Receiver } from '../webhooks.helpers.js';

const APP_SECRET = 'test-secret';

describe('webhook signing secrets at rest', () => {
  let t: TestContext;
  let receiver: Receiver;
  before(async () => (t = await setup({ webhooksAllowPrivate: true })));
  after(() => t.close());
  beforeEach(async () => (receiver = await Receiver.start()));
  afterEach(() => receiver.close());

  const stored = async (id: number) =>
    await t.database.db.selectFrom('webhook_endpoints').select(['secret', 'url']).where('id', '=', id).executeTakeFirstOrThrow();
  /** The webhook lane, driven until it claims nothing more. */
  const deliver = async () => {
    const worker = startJobs(t.app.deps, { lanes: ['webhooks'], loop: false });
    try {
      while ((await worker.tick()) > 0);
    } finally {
      await worker.stop();
    }
  };

  it('keeps the secret sealed on create and on rotation; only the app secret opens it', async () => {
    const made = await createEndpoint(t.a, receiver.url());
    const kept = (await stored(made.id)).secret;
    assert.ok(!kept.includes('whsec_') && !kept.includes(made.secret.slice(6)), 'the row holds no plain secret');
    assert.equal(unseal(APP_SECRET, WEBHOOK_SECRET, kept), made.secret);
    assert.equal(unseal('another-app-secret', WEBHOOK_SECRET, kept), null);
    assert.equal(unseal(APP_SECRET, 'totp-secret', kept), null, 'sealed for webhook signing only');

    const rotated = (await t.a.post('/webhooks/endpoints/rotate-secret', { id: made.id })).body.message.secret as string;
    const keptAgain = (await stored(made.id)).secret;
    assert.ok(!keptAgain.includes('whsec_'));
    assert.equal(unseal(APP_SECRET, WEBHOOK_SECRET, keptAgain), rotated);
  });

  it('signs each delivery with the opened secret', async () => {
    const made = await createEndpoint(t.a, receiver.url('/signed'));
    await emit(t.database, t.a.keys!.user_id, 2);
    await deliver();
    const got = receiver.received.filter((r) => r.path === '/signed');
    assert.equal(got.length, 2);
    for (const r of got) assertSigned(r, made.secret);
  });

  it('fails a delivery whose secret does not open (another app secret) and posts nothing', async () => {
    const made = await createEndpoint(t.a, receiver.url('/unopened'));
    await t.database.db
      .updateTable('webhook_endpoints')
      .set({ secret: seal('another-app-secret', WEBHOOK_SECRET, made.secret) })
      .where('id', '=', made.id)
      .execute();
    await emit(t.database, t.a.keys!.user_id, 1);
    await deliver();
    assert.equal(receiver.received.filter((r) => r.path === '/unopened').length, 0);
    const log = (await t.a.get('/webhooks/deliveries', { endpoint_id: made.id })).body.message.deliveries;
    assert.deepEqual(
      log.map((a: { status_code: unknown; error: unknown }) => [a.status_code, a.error]),
      [[null, "the endpoint's signing secret does not open with this APP_SECRET: rotate the secret"]],
    );
  });

  it('migration 030 seals the secrets kept in plain text, and needs the app secret to do it', async () => {
    const at = isoMicros(new Date());
    const plain = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
    const row = await t.database.db
      .insertInto('webhook_endpoints')
      .values({ user_id: t.a.keys!.user_id, url: receiver.url('/old'), events: '["*"]', secret: plain, created_at: at, updated_at: at })
      .returning('id')
      .executeTakeFirstOrThrow();
    const sealedBefore = await createEndpoint(t.a, receiver.url('/new'));
    const keptBefore = (await stored(sealedBefore.id)).secret;
    // As a database that has not run 030 yet: the migrations after it undone, newest first.
    const later = await sql<{ name: string }>`select name from kysely_migration where name > '030' order by name desc`.execute(
      t.database.db,
    );
    for (const { name } of later.rows) {
      if (name !== '030_sealed_webhook_secrets') {
        const migration = (await import(`../../../src/db/migrations/${name}.js`)) as { down(db: unknown): Promise<void> };
        await migration.down(t.database.db);
      }
      await sql`delete from kysely_migration where name = ${name}`.execute(t.database.db);
    }
    await assert.rejects(
      migrateToLatest(t.database.db),
      /030_sealed_webhook_secrets failed: sealing or opening the webhook secrets needs the app secret \(APP_SECRET\)/,
    );
    assert.equal((await stored(row.id)).secret, plain, 'nothing changed without the app secret');

    await migrateToLatest(t.database.db, { appSecret: APP_SECRET });
    const kept = (await stored(row.id)).secret;
    assert.ok(!kept.startsWith('whsec_'));
    assert.equal(unseal(APP_SECRET, WEBHOOK_SECRET, kept), plain);
    assert.equal((await stored(sealedBefore.id)).secret, keptBefore, 'a sealed secret is left as it is');

    await emit(t.database, t.a.keys!.user_id, 1);
    await deliver();
    const old = receiver.received.filter((r) => r.path === '/old');
    assert.equal(old.length, 1);
    assertSigned(old[0], plain);
  });
});

describe('credentials in webhook URLs', () => {
  let t: TestContext;
  let receiver: Receiver;
  before(async () => {
    t = await setup({ webhooksAllowPrivate: true });
    receiver = await Receiver.start();
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });

  const listed = async (c = t.a) => (await c.get('/webhooks/endpoints')).body.message.endpoints as Array<{ id: number; url: string }>;

  it('masks the user, the password and secret-looking query values in every answer', async () => {
    const saved = `http://hook-user:s3cr3t@127.0.0.1:${receiver.port}/in?token=abc&x=1&apiKey=k1&accessToken=zz&sig=&page=2`;
    const { id } = await createEndpoint(t.a, saved);
    const shown = `http://***:***@127.0.0.1:${receiver.port}/in?token=***&x=1&apiKey=***&accessToken=***&sig=&page=2`;
    assert.equal((await listed()).find((e) => e.id === id)!.url, shown);
    // A viewer (webhooks.read) reads the same, and so does a writer: no answer shows them.
    const made = await t.a.request('POST', '/keys/create', { json: { name: 'Viewer', scopes: ['webhooks.read'] } });
    const viewer = new Client(t.app, { user_id: t.a.keys!.user_id, ...made.body.message });
    const text = (await viewer.get('/webhooks/endpoints')).text;
    assert.ok(text.includes(shown.replaceAll('/', '\\/')) || text.includes(shown), text);
    for (const secret of ['hook-user', 's3cr3t', 'abc', 'k1', 'zz']) assert.ok(!text.includes(secret), secret);
    // Kept as saved.
    const row = await t.database.db.selectFrom('webhook_endpoints').select('url').where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.url, saved);
  });

  it('delivers to the URL as saved, with its credentials', async () => {
    const { id } = await createEndpoint(t.a, `http://hook-user:s3cr3t@127.0.0.1:${receiver.port}/basic`);
    await emit(t.database, t.a.keys!.user_id, 1);
    const worker = startJobs(t.app.deps, { lanes: ['webhooks'], loop: false });
    try {
      while ((await worker.tick()) > 0);
    } finally {
      await worker.stop();
    }
    const got = receiver.received.filter((r) => r.path === '/basic');
    assert.equal(got.length, 1);
    assert.equal(got[0].headers.authorization, `Basic ${Buffer.from('hook-user:s3cr3t').toString('base64')}`);
    await t.a.delete('/webhooks/endpoints/delete', { id });
  });

  it('keeps the saved URL when an edit sends back the masked one, and takes a new URL', async () => {
    const saved = `http://u:p@127.0.0.1:${receiver.port}/edit?secret=s`;
    const { id } = await createEndpoint(t.a, saved);
    const url = (await listed()).find((e) => e.id === id)!.url;
    const r = await t.a.post('/webhooks/endpoints/update', { id, url, description: 'Renamed', events: ['*'] });
    assert.equal(r.status, 200, r.text);
    const row = () => t.database.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual([(await row()).url, (await row()).description], [saved, 'Renamed']);
    const other = `http://127.0.0.1:${receiver.port}/other`;
    assert.equal((await t.a.post('/webhooks/endpoints/update', { id, url: other })).status, 200);
    assert.equal((await row()).url, other);
  });

  it('masks the URL in the note that an endpoint was disabled', () => {
    const mail = endpointDisabledMail(
      t.config,
      { email_address: 'ops@example.com', email_owner: 'Ops' },
      { id: 7, user_id: 1, url: 'https://u:p@hooks.example.com/x?key=k', failing_since: '2030-01-01T00:00:00.000000Z' },
    );
    assert.match(String(mail.text), /https:\/\/\*\*\*:\*\*\*@hooks\.example\.com\/x\?key=\*\*\*/);
    assert.ok(!String(mail.text).includes('u:p@') && !String(mail.html).includes('key=k'));
  });

  it('leaves a URL without credentials as saved', () => {
    for (const url of ['https://hooks.example.com/x?page=2&design=a', 'http://127.0.0.1:9/hook', 'https://h.example/p?token=']) {
      assert.equal(maskedUrl(url), url);
    }
    assert.equal(maskedUrl('https://only-user@h.example/'), 'https://***@h.example/');
    assert.equal(maskedUrl('https://h.example/?hub.secret=x&X-Api-Key=y'), 'https://h.example/?hub.secret=***&X-Api-Key=***');
  });
});
