import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setup, type TestContext } from '../helpers.js';

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
