import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import * as m029 from '../../../src/db/migrations/029_access_chains.js';
import { freshDatabase, setup, type TestContext } from '../../helpers.js';
import { keyClient, keyRefused } from './keys.helpers.js';
import { person } from './sessions.helpers.js';

const INVALID = { status: 'failed', errors: 'Invalid API credentials' };

describe('a key is bounded by the person at the start of its chain of makers', () => {
  let t: TestContext;
  before(async () => {
    t = await setup({}, { clock: '2030-01-01T00:00:00.000Z' });
  });
  after(() => t.close());

  it('bounds a key made by a key by the person at the start of the chain: a demotion narrows it, a removal ends it', async () => {
    const admin = await person(t, 'admin');
    const a = await keyClient(admin, ['keys.write', 'contacts.read', 'users.write'], 'A');
    const b = await keyClient(a, ['keys.write', 'contacts.read', 'users.write'], 'B');
    const c = await keyClient(b, ['contacts.read'], 'C');
    const stored = await t.database.db
      .selectFrom('api_keys')
      .select(['name', 'root_person_id'])
      .where('name', 'in', ['A', 'B', 'C'])
      .execute();
    assert.deepEqual(
      stored.map((k) => [k.name, k.root_person_id]),
      [
        ['A', admin.personId],
        ['B', admin.personId],
        ['C', admin.personId],
      ],
    );
    assert.equal((await b.get('/users')).status, 200);
    assert.equal((await b.get('/contacts-type')).status, 200);
    // An editor may not read people: neither may a key made by a key the editor made.
    assert.equal((await t.a.post('/users/update', { id: admin.personId, role: 'editor' })).status, 200);
    assert.deepEqual((await b.get('/users')).body, keyRefused('users.read'));
    assert.deepEqual((await a.get('/users')).body, keyRefused('users.read'));
    assert.equal((await b.get('/contacts-type')).status, 200);
    assert.equal((await t.a.post('/users/update', { id: admin.personId, role: 'admin' })).status, 200);
    assert.equal((await b.get('/users')).status, 200);
    // Removed by the owner: every key of the chain is refused from its next request.
    assert.equal((await t.a.delete('/users/delete', { id: admin.personId })).status, 200);
    for (const k of [a, b, c]) {
      const r = await k.get('/contacts-type');
      assert.equal(r.status, 401);
      assert.deepEqual(r.body, INVALID);
    }
    assert.deepEqual((await b.post('/users/invite', { email: 'back.again@example.com', role: 'viewer' })).body, INVALID);
  });

  it('lets a chain that starts at the command line stand alone', async () => {
    const k = await keyClient(t.a, ['keys.write', 'contacts.read'], 'CLI child');
    const grandchild = await keyClient(k, ['contacts.read'], 'CLI grandchild');
    const row = await t.database.db
      .selectFrom('api_keys')
      .select('root_person_id')
      .where('name', '=', 'CLI grandchild')
      .executeTakeFirstOrThrow();
    assert.equal(row.root_person_id, null);
    assert.equal((await grandchild.get('/contacts-type')).status, 200);
  });
});

describe('keys made before their chains were kept', () => {
  it('get the person at the start of their chain, read through revoked makers from the audit log', async () => {
    const { database, drop } = await freshDatabase();
    try {
      const db = database.db;
      await m029.down(db);
      const at = '2030-01-01T00:00:00.000000Z';
      const userId = (
        await db
          .insertInto('accounts')
          .values({ name: 'Old', public_key: 'pk_x', secret_hash: '', created_at: at, updated_at: at })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id;
      const personId = (
        await db
          .insertInto('people')
          .values({ user_id: userId, email: 'p@example.com', email_key: 'p@example.com', role: 'admin', created_at: at, updated_at: at })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id;
      const key = async (id: number, type: string | null, by: number | null) =>
        sql`insert into api_keys (id, user_id, name, public_key, secret_hash, scopes, created_by_type, created_by_id, created_at, updated_at)
            values (${id}, ${userId}, ${`k${id}`}, ${`pk_${id}`}, 'x', 'full', ${type}, ${by}, ${at}, ${at})`.execute(db);
      const made = async (id: number, type: string, by: number) =>
        sql`insert into audit_log (user_id, actor_type, actor_id, actor_name, action, target, status, created_at)
            values (${userId}, ${type}, ${by}, 'x', 'POST /keys/create', ${String(id)}, 200, ${at})`.execute(db);
      await key(1, null, null); // the command line's
      await key(2, 'user', personId); // the person's
      await key(3, 'key', 2); // a key of the person's key
      await key(4, 'key', 1); // a key of the command line's key
      // 5 (revoked) was made by key 6 (revoked), made by the person: the audit log says so.
      await made(6, 'user', personId);
      await made(5, 'key', 6);
      await key(7, 'key', 5);
      await key(8, 'key', 9); // 9 revoked, and nothing tells who made it
      await m029.up(db);
      const roots = await db.selectFrom('api_keys').select(['id', 'root_person_id']).orderBy('id').execute();
      assert.deepEqual(
        roots.map((r) => [r.id, r.root_person_id]),
        [
          [1, null],
          [2, personId],
          [3, personId],
          [4, null],
          [7, personId],
          [8, null],
        ],
      );
    } finally {
      await drop();
    }
  });
});
