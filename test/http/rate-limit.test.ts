import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setup, type TestContext } from '../helpers.js';
import { keyClient } from '../modules/access/keys.helpers.js';
import { person } from '../modules/access/sessions.helpers.js';

describe('rate limit', () => {
  let t: TestContext;
  before(async () => {
    t = await setup({ rateLimitPerMinute: 3 });
  });
  after(() => t.close());

  it('answers the request over the per-minute limit with 429, Retry-After and RateLimit-* headers', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await t.a.get('/contacts-type');
      assert.equal(r.status, 200);
      assert.equal(r.headers['ratelimit-limit'], '3');
      assert.equal(r.headers['ratelimit-remaining'], String(2 - i));
      assert.ok(r.headers['ratelimit-reset'] !== undefined);
    }
    const r = await t.a.get('/contacts-type');
    assert.equal(r.status, 429);
    assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(r.body.status, 'failed');
    assert.equal(typeof r.body.errors, 'string');
    assert.match(r.body.errors, /Too many requests/i);
    const retry = Number(r.headers['retry-after']);
    assert.ok(retry >= 1 && retry <= 60, String(r.headers['retry-after']));
    assert.equal(r.headers['ratelimit-limit'], '3');
    assert.equal(r.headers['ratelimit-remaining'], '0');
  });

  it('counts each account separately', async () => {
    const r = await t.b.get('/contacts-type');
    assert.equal(r.status, 200);
  });

  it('does not count requests that fail authentication against an account', async () => {
    for (let i = 0; i < 5; i++) {
      const r = await t.anon.get('/contacts-type');
      assert.equal(r.status, 401);
    }
    assert.equal((await t.b.get('/contacts-type')).status, 200);
  });
});

describe('rate limit per key and per person', () => {
  let t: TestContext;
  before(async () => {
    t = await setup({ rateLimitPerMinute: 4 });
  });
  after(() => t.close());

  it('counts each key and each person on its own: one busy key does not use up the account', async () => {
    const busy = await keyClient(t.a, ['contacts.read'], 'Busy');
    const p = await person(t, 'viewer');
    for (let i = 0; i < 4; i++) assert.equal((await busy.get('/contacts-type')).status, 200);
    assert.equal((await busy.get('/contacts-type')).status, 429);
    // The account's other key (which made the busy one and the invitation: 2 of its 4) and its person go on.
    assert.equal((await t.a.get('/contacts-type')).status, 200);
    for (let i = 0; i < 4; i++) assert.equal((await p.get('/contacts-type')).status, 200, `person, request ${i + 1}`);
    assert.equal((await p.get('/contacts-type')).status, 429);
    assert.equal((await t.a.get('/contacts-type')).status, 200);
  });
});
