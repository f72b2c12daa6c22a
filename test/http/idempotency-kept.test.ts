/**
 * Which answers an `Idempotency-Key` keeps: every answer to the request, a 4xx included (the 422 of
 * the route's schema as much as one of its service), but not a refusal of the rate limiter, which
 * comes before the key is claimed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setup, type Response, type TestContext } from '../helpers.js';

const key = (k: string) => ({ 'idempotency-key': k });
const REUSED = { status: 'failed', errors: 'Idempotency-Key reused with a different request' };

function addType(t: TestContext, form: Record<string, unknown>, k: string): Promise<Response> {
  return t.a.request('POST', '/contacts-type/add', { form, headers: key(k) });
}

/** Asserts that `again` is `first` given again, marked as a replay. */
function assertReplay(again: Response, first: Response): void {
  assert.deepEqual([again.status, again.body], [first.status, first.body]);
  assert.equal(again.headers['idempotent-replayed'], 'true');
}

async function typeNames(t: TestContext): Promise<string[]> {
  const r = await t.a.get('/contacts-type');
  return r.body.message.contactTypes.map((c: { name: string }) => c.name);
}

describe('idempotency keys keep 4xx answers', () => {
  let t: TestContext;
  before(async () => (t = await setup()));
  after(() => t.close());

  it("keeps the 422 of the route's schema: replayed, and the key is spent on that request", async () => {
    const first = await addType(t, {}, 'k-schema');
    assert.deepEqual([first.status, first.body], [422, { status: 'failed', errors: { name: ['The name field is required.'] } }]);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    assertReplay(await addType(t, {}, 'k-schema'), first);
    // The fixed request needs a new key: with this one it is another request.
    const fixed = await addType(t, { name: 'Fixed' }, 'k-schema');
    assert.deepEqual([fixed.status, fixed.body], [422, REUSED]);
    assert.ok(!(await typeNames(t)).includes('Fixed'));
  });

  it("keeps the 422 of the route's service (a name already taken) and replays it", async () => {
    assert.equal((await addType(t, { name: 'Taken' }, 'k-taken-1')).status, 200);
    const first = await addType(t, { name: 'Taken' }, 'k-taken-2');
    assert.deepEqual([first.status, first.body], [422, { status: 'failed', errors: { name: ['The name has already been taken.'] } }]);
    assertReplay(await addType(t, { name: 'Taken' }, 'k-taken-2'), first);
  });

  it('answers a key reused with another request with the text, whatever the route', async () => {
    assert.equal((await t.a.request('POST', '/segment/create', { form: {}, headers: key('k-other') })).status, 422);
    const other = await t.a.request('POST', '/segment/create', { form: { name: 'x' }, headers: key('k-other') });
    assert.deepEqual([other.status, other.body], [422, REUSED]);
    assert.equal(other.headers['content-type'], 'application/json; charset=utf-8');
  });
});

describe('idempotency keys and the rate limit', () => {
  let t: TestContext;
  before(async () => (t = await setup({ rateLimitPerMinute: 2 })));
  after(() => t.close());

  it('a request refused by the rate limit claims no key: nothing is kept for it', async () => {
    for (let i = 0; i < 2; i++) assert.equal((await t.a.get('/contacts-type')).status, 200);
    const refused = await addType(t, { name: 'Limited' }, 'k-limited');
    assert.equal(refused.status, 429);
    const kept = await t.database.db.selectFrom('idempotency_keys').select('key').where('key', '=', 'k-limited').execute();
    assert.deepEqual(kept, []);
  });
});
