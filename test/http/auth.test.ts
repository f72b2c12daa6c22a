import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAccount, rotateAccountKeys } from '../../src/modules/accounts/accounts.service.js';
import { sql } from 'kysely';
import { LISTENER_APP } from '../../src/db/listener.js';
import { changeAccounts, Client, ENGINE, setup, type TestContext } from '../helpers.js';

const INVALID = { status: 'failed', errors: 'Invalid API credentials' };

describe('authentication', () => {
  let t: TestContext;
  before(async () => {
    t = await setup();
  });
  after(() => t.close());

  it('answers both missing headers with 401 and one error array per header', async () => {
    const r = await t.anon.get('/contacts-type');
    assert.equal(r.status, 401);
    assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
    assert.deepEqual(r.body, {
      status: 'failed',
      errors: { PublicKey: ['The public key field is required.'], SecretKey: ['The secret key field is required.'] },
    });
  });

  it('names only the missing header when one is given', async () => {
    const noSecret = await t.anon.request('GET', '/contacts-type', { headers: { PublicKey: t.a.keys!.public_key } });
    assert.equal(noSecret.status, 401);
    assert.deepEqual(noSecret.body, { status: 'failed', errors: { SecretKey: ['The secret key field is required.'] } });
    const noPublic = await t.anon.request('GET', '/contacts-type', { headers: { SecretKey: t.a.keys!.secret_key } });
    assert.equal(noPublic.status, 401);
    assert.deepEqual(noPublic.body, { status: 'failed', errors: { PublicKey: ['The public key field is required.'] } });
  });

  it('treats a blank header as missing', async () => {
    const r = await t.anon.request('GET', '/contacts-type', { headers: { PublicKey: '   ', SecretKey: t.a.keys!.secret_key } });
    assert.equal(r.status, 401);
    assert.deepEqual(r.body, { status: 'failed', errors: { PublicKey: ['The public key field is required.'] } });
  });

  it('checks the headers before the body is validated, on POST and DELETE too', async () => {
    const post = await t.anon.post('/contacts/add', {});
    assert.equal(post.status, 401);
    assert.deepEqual(Object.keys(post.body.errors), ['PublicKey', 'SecretKey']);
    const del = await t.anon.delete('/contacts/delete', { contact_id: 1 });
    assert.equal(del.status, 401);
  });

  it('accepts the header names in any letter case', async () => {
    const r = await t.anon.request('GET', '/contacts-type', {
      headers: { PUBLICKEY: t.a.keys!.public_key, secretKey: t.a.keys!.secret_key },
    });
    assert.equal(r.status, 200);
  });

  it('answers an unknown public key, a wrong secret and a swapped pair with the same 401 text', async () => {
    const { public_key, secret_key } = t.a.keys!;
    const cases = [
      { PublicKey: 'pk_unknown', SecretKey: secret_key },
      { PublicKey: public_key, SecretKey: secret_key + 'x' },
      { PublicKey: public_key, SecretKey: t.b.keys!.secret_key },
      { PublicKey: secret_key, SecretKey: public_key },
    ];
    for (const headers of cases) {
      const r = await t.anon.request('GET', '/contacts-type', { headers });
      assert.equal(r.status, 401, JSON.stringify(headers));
      assert.deepEqual(r.body, INVALID);
    }
  });

  it('rejects a wrong secret of the right length for a key it has just verified', async () => {
    const { public_key, secret_key } = t.a.keys!;
    assert.equal((await t.a.get('/contacts-type')).status, 200);
    const last = secret_key.at(-1) === 'A' ? 'B' : 'A';
    const r = await t.anon.request('GET', '/contacts-type', {
      headers: { PublicKey: public_key, SecretKey: secret_key.slice(0, -1) + last },
    });
    assert.equal(r.status, 401);
    assert.deepEqual(r.body, INVALID);
    assert.equal((await t.a.get('/contacts-type')).status, 200);
  });

  it('rejects a disabled account with the same text', async () => {
    const c = new Client(t.app, await createAccount(t.database.db, 'Disabled'));
    assert.equal((await c.get('/contacts-type')).status, 200);
    await changeAccounts(t.database, () =>
      t.database.db.updateTable('accounts').set({ disabled: 1 }).where('id', '=', c.keys!.user_id).execute(),
    );
    const r = await c.get('/contacts-type');
    assert.equal(r.status, 401);
    assert.deepEqual(r.body, INVALID);
  });

  it('stops accepting rotated keys at once and accepts the new ones', async () => {
    const old = new Client(t.app, await createAccount(t.database.db, 'Rotating'));
    assert.equal((await old.get('/contacts-type')).status, 200);
    const fresh = await changeAccounts(t.database, () => rotateAccountKeys(t.database.db, old.keys!.user_id));
    assert.ok(fresh);
    assert.notEqual(fresh.public_key, old.keys!.public_key);
    const r = await old.get('/contacts-type');
    assert.equal(r.status, 401);
    assert.deepEqual(r.body, INVALID);
    // Only the new public key with the old secret must fail too: the secret was replaced as well.
    const mixed = await t.anon.request('GET', '/contacts-type', {
      headers: { PublicKey: fresh.public_key, SecretKey: old.keys!.secret_key },
    });
    assert.deepEqual(mixed.body, INVALID);
    assert.equal((await new Client(t.app, fresh).get('/contacts-type')).status, 200);
    assert.equal(await rotateAccountKeys(t.database.db, 999_999), null);
  });

  it(
    'remembers no key on PostgreSQL while it cannot hear of account changes, and listens again',
    { skip: ENGINE !== 'postgres' && 'PostgreSQL only' },
    async () => {
      const version = t.database.version!;
      const until = async (ok: () => boolean) => {
        for (let i = 0; i < 600 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
        assert.ok(ok());
      };
      // Listening: there is a version, and it holds between changes.
      const steady = () => {
        const v = version();
        return v !== undefined && v === version();
      };
      await until(steady);
      const c = new Client(t.app, await changeAccounts(t.database, () => createAccount(t.database.db, 'Watched')));
      assert.equal((await c.get('/contacts-type')).status, 200);
      // The listening connection dies; a rotation committed meanwhile sends a notification nobody hears.
      await sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${LISTENER_APP} and datname = current_database()`.execute(
        t.database.db,
      );
      await until(() => !steady());
      const fresh = await rotateAccountKeys(t.database.db, c.keys!.user_id);
      const r = await c.get('/contacts-type');
      assert.equal(r.status, 401);
      assert.deepEqual(r.body, INVALID);
      // It listens again within seconds, and keys are remembered again.
      await until(steady);
      assert.equal((await new Client(t.app, fresh!).get('/contacts-type')).status, 200);
    },
  );

  it('stores the secret only as a hash', async () => {
    const row = await t.database.db.selectFrom('accounts').selectAll().where('id', '=', t.a.keys!.user_id).executeTakeFirstOrThrow();
    assert.equal(row.public_key, t.a.keys!.public_key);
    assert.ok(!Object.values(row).includes(t.a.keys!.secret_key));
    assert.match(t.a.keys!.secret_key, /^sk_[A-Za-z0-9_-]{40,}$/);
    assert.match(t.a.keys!.public_key, /^pk_[A-Za-z0-9_-]{30,}$/);
  });
});
