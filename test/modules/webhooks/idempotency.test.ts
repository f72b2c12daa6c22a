/**
 * A webhook endpoint's secret is shown once: an answer kept for an `Idempotency-Key` (create,
 * rotate-secret) is kept without it, so a replay never gives a secret, least of all one that was
 * rotated away since.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setup, type Response, type TestContext } from '../../helpers.js';
import { unseal, WEBHOOK_SECRET } from '../../../src/util/seal.js';

const SECRET = /^whsec_[A-Za-z0-9+/]+={0,2}$/;
const key = (k: string) => ({ 'idempotency-key': k });

/** Every answer body kept for the account's keys, as stored. */
async function storedBodies(t: TestContext): Promise<string> {
  const rows = await t.database.db.selectFrom('idempotency_keys').select('body').where('user_id', '=', t.a.keys!.user_id).execute();
  return rows.map((r) => r.body ?? '').join('\n');
}

describe('webhook secrets and idempotency keys', () => {
  let t: TestContext;
  before(async () => (t = await setup()));
  after(() => t.close());

  const create = (k: string): Promise<Response> =>
    t.a.request('POST', '/webhooks/endpoints/create', { form: { url: 'https://93.184.216.34/hook', events: ['*'] }, headers: key(k) });
  const rotate = (id: number, k: string): Promise<Response> =>
    t.a.request('POST', '/webhooks/endpoints/rotate-secret', { form: { id }, headers: key(k) });

  it('replays a create with the endpoint id and a null secret, even after a rotation', async () => {
    const first = await create('k-create');
    assert.equal(first.status, 200, first.text);
    const { id, secret } = first.body.message;
    assert.match(secret, SECRET);
    const rotated = await rotate(id, 'k-rotate-1');
    assert.equal(rotated.status, 200);
    assert.notEqual(rotated.body.message.secret, secret);

    const again = await create('k-create');
    assert.equal(again.status, 200);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.body, { status: 'success', message: { id, secret: null } });
    // Nothing was created a second time.
    const list = await t.a.get('/webhooks/endpoints');
    assert.deepEqual(
      list.body.message.endpoints.map((e: { id: number }) => e.id),
      [id],
    );
  });

  it('replays a rotation with a null secret; the secret in force is the one the rotation gave', async () => {
    const { id } = (await t.a.get('/webhooks/endpoints')).body.message.endpoints[0];
    const first = await rotate(id, 'k-rotate-2');
    assert.match(first.body.message.secret, SECRET);
    const again = await rotate(id, 'k-rotate-2');
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual([again.status, again.body], [200, { status: 'success', message: { secret: null } }]);
    const row = await t.database.db.selectFrom('webhook_endpoints').select('secret').where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(unseal('test-secret', WEBHOOK_SECRET, row.secret), first.body.message.secret);
  });

  it('keeps no secret in the stored answers', async () => {
    const bodies = await storedBodies(t);
    assert.match(bodies, /"secret":null/);
    assert.doesNotMatch(bodies, /whsec_/);
  });

  it('still keeps and replays the failures of those routes', async () => {
    const first = await rotate(999999, 'k-rotate-missing');
    assert.deepEqual([first.status, first.body], [404, { status: 'failed', errors: 'Record not found' }]);
    const again = await rotate(999999, 'k-rotate-missing');
    assert.deepEqual([again.status, again.body, again.headers['idempotent-replayed']], [404, first.body, 'true']);
  });
});
