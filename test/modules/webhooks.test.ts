import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertNeedsKeys, fieldErrors, setup, type TestContext } from '../helpers.js';
import { isoMicros } from '../../src/util/time.js';
import { createEndpoint, emit } from './webhooks.helpers.js';

const NOT_FOUND = { status: 'failed', errors: 'Record not found' };
const PRIVATE = 'The url must not point to a private address.';
const SECRET = /^whsec_[A-Za-z0-9+/]+={0,2}$/;

describe('webhook endpoints', () => {
  let t: TestContext;
  before(async () => (t = await setup({ webhooksAllowPrivate: true })));
  after(() => t.close());

  it('needs the keys on every route', async () => {
    await assertNeedsKeys(t.anon, [
      ['GET', '/webhooks/endpoints'],
      ['POST', '/webhooks/endpoints/create'],
      ['POST', '/webhooks/endpoints/update'],
      ['DELETE', '/webhooks/endpoints/delete'],
      ['POST', '/webhooks/endpoints/rotate-secret'],
      ['GET', '/webhooks/deliveries'],
      ['POST', '/webhooks/deliveries/retry'],
    ]);
  });

  it('creates an endpoint, answers its secret once, and lists it without the secret', async () => {
    const r = await t.a.post('/webhooks/endpoints/create', {
      url: 'http://127.0.0.1:9/hook',
      events: ['message.opened', 'message.clicked', 'message.opened'],
      description: 'Analytics',
    });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.body.message), ['id', 'secret']);
    assert.match(r.body.message.secret, SECRET);
    assert.equal(Buffer.from(r.body.message.secret.slice(6), 'base64').length, 32);
    const list = await t.a.get('/webhooks/endpoints');
    assert.equal(list.status, 200);
    const [e] = list.body.message.endpoints;
    assert.equal(e.id, r.body.message.id);
    assert.deepEqual(
      { url: e.url, events: e.events, description: e.description, enabled: e.enabled, failing_since: e.failing_since },
      {
        url: 'http://127.0.0.1:9/hook',
        events: ['message.opened', 'message.clicked'],
        description: 'Analytics',
        enabled: 1,
        failing_since: null,
      },
    );
    assert.ok(!list.text.includes('whsec_'));
    // `*` takes every event; with it, the names are redundant.
    const all = await createEndpoint(t.a, 'http://127.0.0.1:9/all', ['message.opened', '*']);
    const paged = await t.a.get('/webhooks/endpoints', { page: 1, per_page: 1 });
    assert.deepEqual(paged.body.message.meta, { page: 1, per_page: 1, total: 2 });
    assert.equal(paged.body.message.endpoints[0].id, all.id);
    assert.deepEqual(paged.body.message.endpoints[0].events, ['*']);
    assert.deepEqual((await t.b.get('/webhooks/endpoints')).body, { status: 'success', message: { endpoints: [] } });
  });

  it('refuses a create without url or events, with an unknown event, or with a url that is not http(s)', async () => {
    assert.deepEqual(
      (await t.a.post('/webhooks/endpoints/create', {})).body,
      fieldErrors({ url: ['The url field is required.'], events: ['The events field is required.'] }),
    );
    const bad = await t.a.post('/webhooks/endpoints/create', { url: 'ftp://example.com/x', events: ['message.sent'] });
    assert.equal(bad.status, 422);
    assert.deepEqual(
      bad.body,
      fieldErrors({ url: ['The url must start with http:// or https://.'], 'events.0': ['The selected events.0 is invalid.'] }),
    );
    assert.deepEqual(
      (await t.a.post('/webhooks/endpoints/create', { url: 'not a url', events: ['*'] })).body,
      fieldErrors({ url: ['The url format is invalid.'] }),
    );
    assert.deepEqual(
      (await t.a.post('/webhooks/endpoints/create', { url: 'http://no-such-host.invalid/x', events: ['*'] })).body,
      fieldErrors({ url: ['The url host name does not resolve.'] }),
    );
    assert.deepEqual(
      (await t.a.post('/webhooks/endpoints/create', { url: `http://x.example/${'a'.repeat(2048)}`, events: ['*'] })).body,
      fieldErrors({ url: ['The url must not be greater than 2048 characters.'] }),
    );
  });

  it('updates the given fields; enabling clears the failing state; another account cannot', async () => {
    const { id } = await createEndpoint(t.a, 'http://127.0.0.1:9/u', ['message.opened']);
    const r = await t.a.post('/webhooks/endpoints/update', { id, url: 'http://127.0.0.1:9/v', events: ['*'], enabled: 0 });
    assert.deepEqual(r.body, { status: 'success', message: 'Updated Successfully' });
    const find = async () => (await t.a.get('/webhooks/endpoints')).body.message.endpoints.find((e: { id: number }) => e.id === id);
    assert.deepEqual(
      [(await find()).url, (await find()).events, (await find()).enabled, (await find()).description],
      ['http://127.0.0.1:9/v', ['*'], 0, ''],
    );
    await t.database.db
      .updateTable('webhook_endpoints')
      .set({ failing_since: isoMicros(new Date()) })
      .where('id', '=', id)
      .execute();
    assert.equal((await t.a.post('/webhooks/endpoints/update', { id, description: 'again' })).status, 200);
    assert.notEqual((await find()).failing_since, null);
    assert.equal((await t.a.post('/webhooks/endpoints/update', { id, enabled: 1 })).status, 200);
    assert.deepEqual([(await find()).enabled, (await find()).failing_since, (await find()).description], [1, null, 'again']);

    assert.deepEqual((await t.b.post('/webhooks/endpoints/update', { id, enabled: 0 })).body, NOT_FOUND);
    assert.deepEqual((await t.a.post('/webhooks/endpoints/update', { id: 999999, enabled: 0 })).body, NOT_FOUND);
    assert.equal((await find()).enabled, 1);
    assert.deepEqual(
      (await t.a.request('POST', '/webhooks/endpoints/update', { json: { id, enabled: 2, events: [] } })).body,
      fieldErrors({ enabled: ['The enabled must not be greater than 1.'], events: ['The events field is required.'] }),
    );
    assert.deepEqual((await t.a.post('/webhooks/endpoints/update', {})).body, fieldErrors({ id: ['The id field is required.'] }));
  });

  it('disabling an endpoint gives up its pending deliveries', async () => {
    const { id } = await createEndpoint(t.a, 'http://127.0.0.1:9/d');
    await emit(t.database, t.a.keys!.user_id, 2);
    await t.a.post('/webhooks/endpoints/update', { id, enabled: 0 });
    const states = await t.database.db.selectFrom('webhook_deliveries').select('state').where('endpoint_id', '=', id).execute();
    assert.deepEqual(
      states.map((s) => s.state),
      ['failed', 'failed'],
    );
    // A disabled endpoint takes no new events.
    const before = await t.database.db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', id).execute();
    await emit(t.database, t.a.keys!.user_id, 1);
    const now = await t.database.db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', id).execute();
    assert.equal(now.length, before.length);
  });

  it('rotates the secret: a new one each time; another account cannot', async () => {
    const { id, secret } = await createEndpoint(t.a, 'http://127.0.0.1:9/r');
    const r = await t.a.post('/webhooks/endpoints/rotate-secret', { id });
    assert.equal(r.status, 200);
    assert.match(r.body.message.secret, SECRET);
    assert.notEqual(r.body.message.secret, secret);
    assert.deepEqual((await t.b.post('/webhooks/endpoints/rotate-secret', { id })).body, NOT_FOUND);
    assert.deepEqual((await t.a.post('/webhooks/endpoints/rotate-secret', { id: 999999 })).body, NOT_FOUND);
    assert.deepEqual(
      (await t.a.post('/webhooks/endpoints/rotate-secret', { id: 'x' })).body,
      fieldErrors({ id: ['The id must be an integer.'] }),
    );
  });

  it('deletes an endpoint; again, unknown, missing or another account’s: not found', async () => {
    const { id } = await createEndpoint(t.a, 'http://127.0.0.1:9/x');
    assert.deepEqual((await t.b.delete('/webhooks/endpoints/delete', { id })).body, NOT_FOUND);
    assert.deepEqual((await t.a.delete('/webhooks/endpoints/delete', { id })).body, { status: 'success', message: 'Deleted Successfully' });
    assert.deepEqual((await t.a.delete('/webhooks/endpoints/delete', { id })).body, NOT_FOUND);
    assert.deepEqual((await t.a.delete('/webhooks/endpoints/delete')).body, NOT_FOUND);
    assert.deepEqual((await t.a.delete('/webhooks/endpoints/delete', { id: 'abc' })).body, NOT_FOUND);
  });

  it('lists deliveries of an endpoint of the account only', async () => {
    const { id } = await createEndpoint(t.a, 'http://127.0.0.1:9/l');
    assert.deepEqual((await t.a.get('/webhooks/deliveries', { endpoint_id: id })).body, { status: 'success', message: { deliveries: [] } });
    assert.deepEqual((await t.a.get('/webhooks/deliveries', { endpoint_id: id, per_page: 5 })).body.message.meta, {
      page: 1,
      per_page: 5,
      total: 0,
    });
    assert.deepEqual((await t.b.get('/webhooks/deliveries', { endpoint_id: id })).body, NOT_FOUND);
    assert.deepEqual((await t.a.get('/webhooks/deliveries')).body, NOT_FOUND);
    assert.deepEqual((await t.a.get('/webhooks/deliveries', { endpoint_id: 999999 })).body, NOT_FOUND);
  });

  it('retries only a delivery of the account, to an enabled endpoint', async () => {
    const { id } = await createEndpoint(t.a, 'http://127.0.0.1:9/t');
    await emit(t.database, t.a.keys!.user_id, 1);
    const event = await t.database.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
      .select('e.event_id')
      .where('d.endpoint_id', '=', id)
      .executeTakeFirstOrThrow();
    assert.deepEqual((await t.a.post('/webhooks/deliveries/retry', { endpoint_id: id, event_id: event.event_id })).body, {
      status: 'success',
      message: 'Retry Queued',
    });
    assert.deepEqual((await t.b.post('/webhooks/deliveries/retry', { endpoint_id: id, event_id: event.event_id })).body, NOT_FOUND);
    assert.deepEqual((await t.a.post('/webhooks/deliveries/retry', { endpoint_id: id, event_id: 'evt_nope' })).body, NOT_FOUND);
    assert.deepEqual(
      (await t.a.post('/webhooks/deliveries/retry', {})).body,
      fieldErrors({ endpoint_id: ['The endpoint id field is required.'], event_id: ['The event id field is required.'] }),
    );
    await t.a.post('/webhooks/endpoints/update', { id, enabled: 0 });
    const r = await t.a.post('/webhooks/deliveries/retry', { endpoint_id: id, event_id: event.event_id });
    assert.deepEqual([r.status, r.body], [409, { status: 'failed', errors: 'The endpoint is disabled: enable it first.' }]);
  });
});

describe('webhook endpoint URLs must not point to private addresses', () => {
  let t: TestContext;
  before(async () => (t = await setup()));
  after(() => t.close());

  for (const url of [
    'http://127.0.0.1/hook',
    'http://10.0.0.1/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://[::1]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://100.64.0.1/',
    'http://0.0.0.0/',
    'https://[fd00::1]/',
    'http://localhost:8080/hook',
  ]) {
    it(`refuses ${url}`, async () => {
      const r = await t.a.post('/webhooks/endpoints/create', { url, events: ['*'] });
      assert.deepEqual([r.status, r.body], [422, fieldErrors({ url: [PRIVATE] })]);
    });
  }

  it('refuses ftp:// and takes a public address; an update to a private one is refused too', async () => {
    assert.deepEqual(
      (await t.a.post('/webhooks/endpoints/create', { url: 'ftp://93.184.216.34/x', events: ['*'] })).body,
      fieldErrors({ url: ['The url must start with http:// or https://.'] }),
    );
    const { id } = await createEndpoint(t.a, 'https://93.184.216.34/hook');
    assert.deepEqual(
      (await t.a.post('/webhooks/endpoints/update', { id, url: 'http://192.168.1.10/' })).body,
      fieldErrors({ url: [PRIVATE] }),
    );
  });
});
