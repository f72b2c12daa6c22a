import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TestClock } from '../../../src/util/clock.js';
import { drainQueue, make, setup, type TestContext } from '../../helpers.js';
import { keyClient, keyRefused } from './keys.helpers.js';
import { person } from './sessions.helpers.js';

const DAY = 86_400_000;

/** The account's entries, newest first. */
async function entries(t: TestContext, query: object = {}) {
  const r = await t.a.get('/audit-log', query);
  assert.equal(r.status, 200, r.text);
  return r.body.message.entries as Array<Record<string, any>>;
}

describe('the audit log', () => {
  let t: TestContext;
  let clock: TestClock;
  let defaultKeyId: number;
  before(async () => {
    t = await setup({ webhooksAllowPrivate: true }, { clock: '2030-01-01T00:00:00.000Z' });
    clock = t.clock as TestClock;
    defaultKeyId = (await t.a.get('/keys')).body.message.keys[0].id;
  });
  after(() => t.close());

  it('writes one entry per change: actor, action, target, status, address, agent and time', async () => {
    const r = await t.a.request('POST', '/contacts-type/add', {
      form: { name: 'Audited type' },
      headers: { 'user-agent': 'audit-test/1' },
    });
    const [entry] = await entries(t);
    assert.deepEqual(entry, {
      id: entry.id,
      actor: { type: 'key', id: defaultKeyId, name: 'Default' },
      action: 'POST /contacts-type/add',
      target: String(r.body.id),
      status: 200,
      ip: '127.0.0.1',
      user_agent: 'audit-test/1',
      created_at: '2030-01-01T00:00:00.000000Z',
    });
  });

  it('writes nothing for a read, and writes the GET routes that change something', async () => {
    const before = (await entries(t)).length;
    await t.a.get('/contacts-type');
    await t.a.get('/contacts/list');
    assert.equal((await entries(t)).length, before);
    const r = await t.a.get('/automations/pause', { utr: 'no-such-utr' });
    assert.equal(r.status, 404);
    const [entry] = await entries(t);
    assert.equal(entry.action, 'GET /automations/pause');
    assert.equal(entry.target, 'no-such-utr');
    assert.equal(entry.status, 404);
  });

  it('names the record of a delete and the ids of a bulk delete, and writes refused requests with their status', async () => {
    const a = await make.contact(t.a);
    const b = await make.contact(t.a);
    await t.a.delete('/contacts/delete', { contact_id: a });
    assert.equal((await entries(t))[0].target, String(a));
    await t.a.post('/contacts/bulk-delete', { strIds: [b, 999] });
    assert.deepEqual([(await entries(t))[0].action, (await entries(t))[0].target], ['POST /contacts/bulk-delete', `${b},999`]);
    await t.a.post('/contacts-type/add', {});
    assert.equal((await entries(t))[0].status, 422);
    const narrow = await keyClient(t.a, ['contacts.read'], 'Narrow');
    assert.deepEqual((await narrow.post('/segment/create', {})).body, keyRefused('segments.write'));
    const [refused] = await entries(t);
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.actor.name, 'Narrow');
    assert.equal(refused.action, 'POST /segment/create');
  });

  it('writes a request by session refused for its CSRF token', async () => {
    const p = await person(t, 'editor');
    const r = await p.request('POST', '/contacts-type/add', { form: { name: 'Forged' }, headers: { 'x-csrf-token': 'forged' } });
    assert.deepEqual(r.body, { status: 'failed', errors: 'Invalid CSRF token' });
    const [refused] = await entries(t);
    assert.deepEqual(
      [refused.actor, refused.action, refused.status],
      [{ type: 'user', id: p.personId, name: p.email }, 'POST /contacts-type/add', 403],
    );
  });

  it('shows only the account’s own entries, and only to a caller with the audit scope', async () => {
    await t.b.post('/contacts-type/add', { name: 'In B' });
    const a = await entries(t);
    assert.ok(a.every((e) => e.action !== 'POST /contacts-type/add' || e.actor.id === defaultKeyId));
    const bList = (await t.b.get('/audit-log')).body.message.entries;
    assert.equal(bList.length, 1);
    const k = await keyClient(t.a, ['contacts.write']);
    assert.deepEqual((await k.get('/audit-log')).body, keyRefused('audit.read'));
    assert.equal((await (await keyClient(t.a, ['audit.read'])).get('/audit-log')).status, 200);
  });

  it('filters by actor, action and time, and pages like every list', async () => {
    const k = await keyClient(t.a, ['contacts.write'], 'Filter key');
    const keyId = (await t.a.get('/keys')).body.message.keys.find((x: { name: string }) => x.name === 'Filter key').id;
    clock.advance(DAY);
    const since = clock.now().toISOString();
    await k.post('/contacts-type/add', { name: 'By filter key' });
    await k.post('/contacts-type/add', { name: 'By filter key 2' });
    const byKey = await entries(t, { actor_type: 'key', actor_id: keyId });
    assert.deepEqual(
      byKey.map((e) => e.action),
      ['POST /contacts-type/add', 'POST /contacts-type/add'],
    );
    assert.equal((await entries(t, { since })).length, 2);
    assert.equal((await entries(t, { until: since })).filter((e) => e.actor.id === keyId).length, 0);
    assert.ok((await entries(t, { action: 'POST /keys/create' })).every((e) => e.action === 'POST /keys/create'));
    const page = await t.a.get('/audit-log', { page: 1, per_page: 1, actor_id: keyId, actor_type: 'key' });
    assert.equal(page.body.message.entries.length, 1);
    assert.deepEqual(page.body.message.meta, { page: 1, per_page: 1, total: 2 });
    const bad = await t.a.get('/audit-log', { since: 'yesterday', actor_type: 'robot' });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.errors, { since: ['The since is not a valid date.'], actor_type: ['The selected actor type is invalid.'] });
  });

  it('never holds a secret or a request body', async () => {
    const made = await t.a.request('POST', '/keys/create', { json: { name: 'Secret holder', scopes: ['contacts.read'] } });
    const hook = await t.a.post('/webhooks/endpoints/create', { url: 'http://127.0.0.1:9/hook', 'events[0]': '*' });
    const secrets = [t.a.keys!.secret_key, t.b.keys!.secret_key, made.body.message.secret_key, hook.body.message.secret];
    assert.ok(secrets.every((s) => typeof s === 'string' && s.length > 10));
    await t.a.post('/contacts-type/add', { name: 'Body text that must not be kept' });
    const rows = JSON.stringify(await t.database.db.selectFrom('audit_log').selectAll().execute());
    for (const s of secrets) assert.ok(!rows.includes(s), 'a secret in the audit log');
    assert.ok(!rows.includes('Body text that must not be kept'));
    assert.ok(!rows.includes('127.0.0.1:9/hook'));
  });

  it('keeps entries 400 days', async () => {
    assert.ok((await entries(t)).length > 1);
    clock.advance(10 * DAY);
    await t.a.post('/contacts-type/add', { name: 'Recent' });
    const recent = (await entries(t))[0];
    clock.advance(400 * DAY);
    await drainQueue(t);
    // Everything older than 400 days is gone; the entry of exactly 400 days is not yet.
    assert.deepEqual(await entries(t), [recent]);
    clock.advance(1);
    await drainQueue(t);
    assert.deepEqual(await entries(t), []);
  });
});

describe('the audit log behind a proxy', () => {
  it('takes the address from X-Forwarded-For only when TRUST_PROXY says so', async () => {
    for (const [trust, ip] of [
      ['0', '127.0.0.1'],
      ['1', '203.0.113.9'],
    ]) {
      const t = await setup({}, { env: { TRUST_PROXY: trust } });
      try {
        await t.a.request('POST', '/contacts-type/add', { form: { name: 'Proxied' }, headers: { 'x-forwarded-for': '203.0.113.9' } });
        assert.equal((await entries(t))[0].ip, ip, `TRUST_PROXY=${trust}`);
      } finally {
        await t.close();
      }
    }
  });
});
