import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { setup, type TestContext } from '../helpers.js';

describe('health', () => {
  let t: TestContext;
  before(async () => {
    // A limit of one request a minute: health probes must never be counted against it.
    t = await setup({ rateLimitPerMinute: 1 });
  });
  after(() => t.close());

  it('answers /health/live with 200 and {"status":"ok"}, without keys', async () => {
    const r = await t.anon.get('/health/live');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
    assert.deepEqual(r.body, { status: 'ok' });
  });

  it('answers /health/ready with 200 when the database answers and every migration is applied', async () => {
    const r = await t.anon.get('/health/ready');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
    assert.deepEqual(r.body, { status: 'ok', database: 'ok', migrations: 'ok' });
  });

  it('answers 503 naming the migration that is not applied', async () => {
    const last = await t.database.db
      .selectFrom('kysely_migration' as never)
      .select(['name' as never, 'timestamp' as never])
      .orderBy('name' as never, 'desc')
      .executeTakeFirstOrThrow();
    const { name, timestamp } = last as { name: string; timestamp: string };
    await sql`delete from kysely_migration where name = ${name}`.execute(t.database.db);
    try {
      const r = await t.anon.get('/health/ready');
      assert.equal(r.status, 503);
      assert.deepEqual(r.body, { status: 'unavailable', database: 'ok', migrations: `not applied: ${name}` });
    } finally {
      await sql`insert into kysely_migration (name, timestamp) values (${name}, ${timestamp})`.execute(t.database.db);
    }
    assert.equal((await t.anon.get('/health/ready')).status, 200);
  });

  it('is not rate-limited: probes go on answering after the account limit is reached', async () => {
    assert.equal((await t.a.get('/contacts-type')).status, 200);
    assert.equal((await t.a.get('/contacts-type')).status, 429);
    for (let i = 0; i < 5; i++) {
      assert.equal((await t.anon.get('/health/live')).status, 200);
      assert.equal((await t.a.get('/health/ready')).status, 200);
    }
  });
});

describe('health when the database is gone', () => {
  it('answers /health/ready with 503 and no database detail, while /health/live still answers 200', async () => {
    const t = await setup();
    try {
      await t.database.db.destroy();
      const ready = await t.app.inject({ method: 'GET', url: '/health/ready' });
      assert.equal(ready.statusCode, 503);
      assert.deepEqual(ready.json(), { status: 'unavailable', database: 'no answer', migrations: 'unknown' });
      const live = await t.app.inject({ method: 'GET', url: '/health/live' });
      assert.equal(live.statusCode, 200);
    } finally {
      // The database is already destroyed: closing it again may fail, which is not this test's concern.
      await t.close().catch(() => undefined);
    }
  });
});
