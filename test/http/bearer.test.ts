import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, MISSING_KEYS, setup, type TestContext } from '../helpers.js';
import { keyClient, keyRefused } from '../modules/access/keys.helpers.js';
import { ROLE_GRANTS, SCOPES } from '../../src/http/scopes.js';

const INVALID = { status: 'failed', errors: 'Invalid API credentials' };

/** A client that sends its key as one `Authorization: Bearer <public>.<secret>` header, never the two headers. */
class BearerClient extends Client {
  constructor(
    app: TestContext['app'],
    readonly token: string,
  ) {
    super(app, null);
  }
  override request(method: string, path: string, opts: Parameters<Client['request']>[2] = {}) {
    return super.request(method, path, { ...opts, headers: { authorization: `Bearer ${this.token}`, ...opts.headers } });
  }
}

const bearerOf = (c: Client) => `${c.keys!.public_key}.${c.keys!.secret_key}`;

describe('bearer keys', () => {
  let t: TestContext;
  before(async () => {
    t = await setup();
  });
  after(() => t.close());

  it('authenticates as the two headers do, for the same account', async () => {
    const typeId = (await t.a.post('/contacts-type/add', { name: 'Seen by bearer' })).body.id;
    const r = await new BearerClient(t.app, bearerOf(t.a)).get('/contacts-type');
    assert.equal(r.status, 200, r.text);
    assert.ok(r.body.message.contactTypes.some((ct: { id: number }) => ct.id === typeId));
    // Scheme names are case-insensitive (RFC 9110).
    const lower = await t.anon.request('GET', '/contacts-type', { headers: { authorization: `bearer ${bearerOf(t.b)}` } });
    assert.equal(lower.status, 200);
    assert.ok(!lower.body.message.contactTypes.some((ct: { id: number }) => ct.id === typeId), 'account B does not see A’s type');
  });

  it('refuses a malformed bearer token with the one 401 of wrong credentials', async () => {
    const { public_key, secret_key } = t.b.keys!;
    for (const value of [
      'Bearer',
      'Bearer ',
      `Bearer ${public_key}`,
      `Bearer ${public_key}.`,
      `Bearer .${secret_key}`,
      `Bearer ${public_key} .${secret_key}`,
    ]) {
      const r = await t.anon.request('GET', '/contacts-type', { headers: { authorization: value } });
      assert.equal(r.status, 401, value);
      assert.deepEqual(r.body, INVALID, value);
    }
  });

  it('treats another scheme as no key at all', async () => {
    const r = await t.anon.request('GET', '/contacts-type', { headers: { authorization: 'Basic YXBpa2V5OnNlY3JldA==' } });
    assert.equal(r.status, 401);
    assert.deepEqual(r.body, MISSING_KEYS);
  });

  it('refuses a wrong secret, an unknown key and a pair of two accounts alike', async () => {
    const { public_key, secret_key } = t.b.keys!;
    for (const token of [`${public_key}.${secret_key}x`, `pk_unknown.${secret_key}`, `${public_key}.${t.a.keys!.secret_key}`]) {
      const r = await new BearerClient(t.app, token).get('/contacts-type');
      assert.equal(r.status, 401, token);
      assert.deepEqual(r.body, INVALID);
    }
  });

  it('refuses a revoked key on its very next request', async () => {
    const k = await keyClient(t.b, 'full', 'Revoked by bearer test');
    const bearer = new BearerClient(t.app, bearerOf(k));
    assert.equal((await bearer.get('/contacts-type')).status, 200);
    const id = (await t.b.get('/keys')).body.message.keys.find((x: { name: string }) => x.name === 'Revoked by bearer test').id;
    assert.equal((await t.b.delete('/keys/delete', { id })).status, 200);
    const r = await bearer.get('/contacts-type');
    assert.equal(r.status, 401);
    assert.deepEqual(r.body, INVALID);
  });

  it('holds the key to its scopes', async () => {
    const k = await keyClient(t.b, ['contacts.read'], 'Reader');
    const bearer = new BearerClient(t.app, bearerOf(k));
    assert.equal((await bearer.get('/contacts-type')).status, 200);
    const r = await bearer.post('/contacts-type/add', { name: 'Not allowed' });
    assert.equal(r.status, 403);
    assert.deepEqual(r.body, keyRefused('contacts.write'));
  });
});

describe('bearer keys and the rate limit', () => {
  let t: TestContext;
  before(async () => {
    t = await setup({ rateLimitPerMinute: 4 });
  });
  after(() => t.close());

  it('counts against the same limit as the two headers, and writes the key to the audit log', async () => {
    const bearer = new BearerClient(t.app, bearerOf(t.a));
    for (let i = 0; i < 2; i++) assert.equal((await t.a.get('/contacts-type')).status, 200);
    assert.equal((await bearer.post('/contacts-type/add', { name: 'By bearer' })).status, 200);
    const limited = await bearer.get('/contacts-type');
    assert.equal(limited.headers['ratelimit-remaining'], '0');
    assert.equal((await bearer.get('/contacts-type')).status, 429);
    assert.equal((await t.a.get('/contacts-type')).status, 429);
    const entries = await t.database.db
      .selectFrom('audit_log')
      .select(['actor_type', 'actor_name'])
      .where('action', '=', 'POST /contacts-type/add')
      .execute();
    assert.deepEqual(entries, [{ actor_type: 'key', actor_name: 'Default' }]);
  });
});

describe('the mail scopes', () => {
  it('are scopes of their own, given to roles as every other area', () => {
    assert.ok(SCOPES.includes('mail.read') && SCOPES.includes('mail.write'));
    assert.ok(ROLE_GRANTS.owner.scopes.has('mail.write') && ROLE_GRANTS.admin.scopes.has('mail.write'));
    assert.ok(ROLE_GRANTS.editor.scopes.has('mail.write'));
    assert.ok(ROLE_GRANTS.viewer.scopes.has('mail.read') && !ROLE_GRANTS.viewer.scopes.has('mail.write'));
  });

  it('can be given to a key, `write` bringing `read`', async () => {
    const t = await setup();
    try {
      const k = await keyClient(t.a, ['mail.write'], 'Mailer');
      const keys = (await t.a.get('/keys')).body.message.keys;
      assert.deepEqual(keys.find((x: { name: string }) => x.name === 'Mailer').scopes, ['mail.write']);
      assert.deepEqual((await k.get('/contacts-type')).body, keyRefused('contacts.read'));
    } finally {
      await t.close();
    }
  });
});
