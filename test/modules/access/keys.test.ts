import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { sql } from 'kysely';
import { buildApp } from '../../../src/app.js';
import { loadConfig } from '../../../src/config.js';
import * as m026 from '../../../src/db/migrations/026_keys_audit.js';
import * as m029 from '../../../src/db/migrations/029_access_chains.js';
import { hashSecret } from '../../../src/util/secrets.js';
import { rotateAccountKeys } from '../../../src/modules/accounts/accounts.service.js';
import type { TestClock } from '../../../src/util/clock.js';
import { Client, freshDatabase, setup, type TestContext } from '../../helpers.js';
import { keyClient, keyRefused } from './keys.helpers.js';
import { person } from './sessions.helpers.js';

const INVALID = { status: 'failed', errors: 'Invalid API credentials' };

describe('API keys', () => {
  let t: TestContext;
  let clock: TestClock;
  before(async () => {
    t = await setup({}, { clock: '2030-01-01T00:00:00.000Z' });
    clock = t.clock as TestClock;
  });
  after(() => t.close());

  it('lists the account key pair as the key named Default with full scopes, never a secret', async () => {
    const r = await t.a.get('/keys');
    assert.equal(r.status, 200, r.text);
    const [key] = r.body.message.keys;
    assert.equal(r.body.message.keys.length, 1);
    assert.deepEqual(Object.keys(key).sort(), ['created_at', 'created_by', 'id', 'last_used_at', 'name', 'public_key', 'scopes']);
    assert.equal(key.name, 'Default');
    assert.equal(key.scopes, 'full');
    assert.equal(key.public_key, t.a.keys!.public_key);
    assert.equal(key.created_by, null);
    assert.ok(!r.text.includes(t.a.keys!.secret_key));
  });

  it("sets last_used_at at a key's first request, then moves it at most once a minute", async () => {
    const k = await keyClient(t.a, ['contacts.read'], 'Usage');
    const usedAt = async () => {
      const r = await t.a.get('/keys');
      return r.body.message.keys.find((x: { public_key: string }) => x.public_key === k.keys!.public_key).last_used_at;
    };
    assert.equal(await usedAt(), null);
    const first = clock.now().toISOString();
    assert.equal((await k.get('/contacts-type')).status, 200);
    assert.equal(await usedAt(), first.replace('Z', '000Z'));
    clock.advance(59_000);
    assert.equal((await k.get('/contacts-type')).status, 200);
    assert.equal(await usedAt(), first.replace('Z', '000Z'));
    clock.advance(2_000);
    assert.equal((await k.get('/contacts-type')).status, 200);
    assert.equal(await usedAt(), clock.now().toISOString().replace('Z', '000Z'));
  });

  it('makes a scoped key: what it holds works, the rest is 403 with the scope named; write includes read', async () => {
    const k = await keyClient(t.a, ['contacts.write', 'segments.read']);
    assert.equal((await k.get('/contacts-type')).status, 200);
    assert.equal((await k.post('/contacts-type/add', { name: 'By scoped key' })).status, 200);
    assert.equal((await k.get('/segment/list')).status, 200);
    const refused = await k.post('/segment/create', {});
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.body, keyRefused('segments.write'));
    assert.deepEqual((await k.get('/senders')).body, keyRefused('senders.read'));
    assert.deepEqual((await k.get('/keys')).body, keyRefused('keys.read'));
    // The lookup needs no scope.
    assert.equal((await k.get('/get/country-state-city', { country_id: 101, state_id: 4008 })).status, 200);
  });

  it('answers the secret once, with the id and public key, and records who made the key', async () => {
    const r = await t.a.post('/keys/create', { name: 'Shop', 'scopes[0]': 'contacts.read' });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.body.message), ['id', 'public_key', 'secret_key']);
    assert.match(r.body.message.public_key, /^pk_[A-Za-z0-9_-]{30,}$/);
    assert.match(r.body.message.secret_key, /^sk_[A-Za-z0-9_-]{40,}$/);
    const list = (await t.a.get('/keys')).body.message.keys;
    const made = list.find((x: { id: number }) => x.id === r.body.message.id);
    assert.deepEqual(made.scopes, ['contacts.read']);
    const defaultId = list.find((x: { name: string }) => x.name === 'Default').id;
    assert.deepEqual(made.created_by, { type: 'key', id: defaultId, name: 'Default' });
    assert.ok(!JSON.stringify(list).includes(r.body.message.secret_key));
    const row = await t.database.db.selectFrom('api_keys').selectAll().where('id', '=', r.body.message.id).executeTakeFirstOrThrow();
    assert.ok(!Object.values(row).includes(r.body.message.secret_key));
  });

  it('keeps no secret in an answer stored for an Idempotency-Key', async () => {
    const headers = { 'idempotency-key': 'create-key-1' };
    const first = await t.a.request('POST', '/keys/create', { json: { name: 'Once', scopes: ['contacts.read'] }, headers });
    assert.equal(first.status, 200);
    const again = await t.a.request('POST', '/keys/create', { json: { name: 'Once', scopes: ['contacts.read'] }, headers });
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body.message.secret_key, null);
    assert.equal(again.body.message.public_key, first.body.message.public_key);
    const stored = await t.database.db
      .selectFrom('idempotency_keys')
      .select('body')
      .where('key', '=', 'create-key-1')
      .executeTakeFirstOrThrow();
    assert.ok(!stored.body!.includes(first.body.message.secret_key));
  });

  it('refuses bad names and scopes with 422', async () => {
    assert.deepEqual((await t.a.post('/keys/create', {})).body, {
      status: 'failed',
      errors: { name: ['The name field is required.'], scopes: ['The scopes field is required.'] },
    });
    const bad = await t.a.request('POST', '/keys/create', { json: { name: 'X', scopes: ['contacts.admin'] } });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.errors, { scopes: ['The selected scopes is invalid.'] });
    const mixed = await t.a.request('POST', '/keys/create', { json: { name: 'X', scopes: ['full', 'contacts.read'] } });
    assert.deepEqual(mixed.body.errors, { scopes: ['The selected scopes is invalid.'] });
    const blank = await t.a.request('POST', '/keys/create', { json: { name: '   ', scopes: ['contacts.read'] } });
    assert.deepEqual(blank.body.errors, { name: ['The name field is required.'] });
  });

  it('never lets a key grant more than it holds', async () => {
    const maker = await keyClient(t.a, ['keys.write', 'contacts.write']);
    assert.equal((await maker.request('POST', '/keys/create', { json: { name: 'ok', scopes: ['contacts.read'] } })).status, 200);
    assert.equal(
      (await maker.request('POST', '/keys/create', { json: { name: 'ok', scopes: ['contacts.write', 'keys.read'] } })).status,
      200,
    );
    const more = await maker.request('POST', '/keys/create', { json: { name: 'more', scopes: ['contacts.read', 'segments.read'] } });
    assert.equal(more.status, 403);
    assert.deepEqual(more.body, keyRefused('segments.read'));
    const full = await maker.request('POST', '/keys/create', { json: { name: 'full', scopes: ['full'] } });
    assert.deepEqual(full.body, keyRefused('grant full scopes'));
    // Nor through an update of a key it may change.
    const id = (await maker.request('POST', '/keys/create', { json: { name: 'narrow', scopes: ['contacts.read'] } })).body.message.id;
    const widen = await maker.request('POST', '/keys/update', { json: { id, scopes: ['audit.read'] } });
    assert.deepEqual(widen.body, keyRefused('audit.read'));
    // A full key may make full keys.
    assert.equal((await t.a.request('POST', '/keys/create', { json: { name: 'full', scopes: ['full'] } })).status, 200);
  });

  it("bounds a person's key by that person's role today: a demotion narrows it, a removal ends it", async () => {
    const admin = await person(t, 'admin');
    const made = await admin.request('POST', '/keys/create', { json: { name: 'Admin key', scopes: ['contacts.write', 'webhooks.write'] } });
    assert.equal(made.status, 200, made.text);
    const k = new Client(t.a.app, { user_id: t.a.keys!.user_id, ...made.body.message });
    assert.equal((await k.get('/webhooks/endpoints')).status, 200);
    const adminId = (await t.a.get('/users')).body.message.users.find((u: { email: string }) => u.email === admin.email).id;
    assert.equal((await t.a.post('/users/update', { id: adminId, role: 'editor' })).status, 200);
    // An editor may not change webhooks: neither may the key that editor made, from its next request.
    assert.deepEqual((await k.post('/webhooks/endpoints/create', { url: 'http://127.0.0.1:9/hook' })).body, keyRefused('webhooks.write'));
    assert.equal((await k.get('/contacts-type')).status, 200);
    assert.equal((await t.a.delete('/users/delete', { id: adminId })).status, 200);
    const gone = await k.get('/contacts-type');
    assert.equal(gone.status, 401);
    assert.deepEqual(gone.body, INVALID);
  });

  it('renames a key and changes its scopes, taking effect on its next request', async () => {
    const k = await keyClient(t.a, ['contacts.read'], 'Before');
    const id = (await t.a.get('/keys')).body.message.keys.find((x: { public_key: string }) => x.public_key === k.keys!.public_key).id;
    assert.equal((await k.get('/contacts-type')).status, 200);
    const r = await t.a.request('POST', '/keys/update', { json: { id, name: 'After', scopes: ['segments.read'] } });
    assert.deepEqual(r.body, { status: 'success', message: 'Updated Successfully' });
    assert.deepEqual((await k.get('/contacts-type')).body, keyRefused('contacts.read'));
    assert.equal((await k.get('/segment/list')).status, 200);
    const row = (await t.a.get('/keys')).body.message.keys.find((x: { id: number }) => x.id === id);
    assert.equal(row.name, 'After');
    assert.deepEqual(row.scopes, ['segments.read']);
    // Another account's key is not found, and stays as it was.
    const other = await t.b.request('POST', '/keys/update', { json: { id, name: 'Stolen' } });
    assert.deepEqual(other.body, { status: 'failed', errors: 'Record not found' });
  });

  it('revokes a key at once: its very next request is refused', async () => {
    const k = await keyClient(t.a, ['contacts.read']);
    const id = (await t.a.get('/keys')).body.message.keys.find((x: { public_key: string }) => x.public_key === k.keys!.public_key).id;
    assert.equal((await k.get('/contacts-type')).status, 200);
    assert.deepEqual((await t.b.delete('/keys/delete', { id })).body, { status: 'failed', errors: 'Record not found' });
    assert.equal((await k.get('/contacts-type')).status, 200);
    assert.deepEqual((await t.a.delete('/keys/delete', { id })).body, { status: 'success', message: 'Deleted Successfully' });
    const r = await k.get('/contacts-type');
    assert.equal(r.status, 401);
    assert.deepEqual(r.body, INVALID);
    assert.deepEqual((await t.a.delete('/keys/delete', { id })).body, { status: 'failed', errors: 'Record not found' });
    assert.deepEqual((await t.a.delete('/keys/delete')).body, { status: 'failed', errors: 'Record not found' });
  });

  it('rotation from the command line revokes every key of the account and issues a new Default', async () => {
    const c = new Client(t.app, (await rotateAccountKeys(t.database.db, t.b.keys!.user_id))!);
    const k = await keyClient(c, ['contacts.read']);
    assert.equal((await k.get('/contacts-type')).status, 200);
    const fresh = await rotateAccountKeys(t.database.db, c.keys!.user_id);
    t.app.forgetCredentials();
    assert.deepEqual((await k.get('/contacts-type')).body, INVALID);
    assert.deepEqual((await c.get('/contacts-type')).body, INVALID);
    const keys = (await new Client(t.app, fresh!).get('/keys')).body.message.keys;
    assert.deepEqual(
      keys.map((x: { name: string; scopes: unknown }) => [x.name, x.scopes]),
      [['Default', 'full']],
    );
  });
});

describe('the key pair of an account made before keys had names', () => {
  it('becomes the key named Default with full scopes, and keeps working', async () => {
    const { database, drop } = await freshDatabase();
    try {
      const db = database.db;
      await m029.down(db);
      await m026.down(db);
      const now = '2026-01-01T00:00:00.000000Z';
      const secret = 'sk_' + 'a'.repeat(43);
      await sql`insert into accounts (name, public_key, secret_hash, created_at, updated_at) values ('Old', 'pk_old', ${hashSecret(secret)}, ${now}, ${now})`.execute(
        db,
      );
      await m026.up(db);
      await m029.up(db);
      const keys = await db.selectFrom('api_keys').selectAll().execute();
      assert.equal(keys.length, 1);
      assert.equal(keys[0].name, 'Default');
      assert.equal(keys[0].scopes, 'full');
      assert.equal(keys[0].public_key, 'pk_old');
      assert.equal(keys[0].secret_hash, hashSecret(secret));
      assert.equal((await db.selectFrom('accounts').select('secret_hash').executeTakeFirstOrThrow()).secret_hash, '');
      const app = await buildApp({ config: loadConfig({ RATE_LIMIT_PER_MINUTE: '0', DATA_DIR: tmpdir() }, { appSecret: 'x' }), database });
      try {
        const r = await new Client(app, { user_id: keys[0].user_id, public_key: 'pk_old', secret_key: secret }).get('/keys');
        assert.equal(r.status, 200, r.text);
        assert.equal(r.body.message.keys[0].name, 'Default');
      } finally {
        await app.close();
      }
    } finally {
      await drop();
    }
  });
});
