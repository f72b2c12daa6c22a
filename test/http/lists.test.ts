import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { isoMicros } from '../../src/util/time.js';
import { fieldErrors, make, setup, type TestContext } from '../helpers.js';

const MANY = 3000;

describe('lists', () => {
  let t: TestContext;
  let typeId: number;
  before(async () => {
    t = await setup();
    typeId = await make.contactType(t.a, 'Bulk');
    const now = isoMicros(new Date());
    const rows = [];
    for (let i = 0; i < MANY; i++) {
      const email = `bulk${i}@example.com`;
      rows.push({
        user_id: t.a.keys!.user_id,
        contact_type_id: typeId,
        first_name: `F${i}`,
        last_name: 'L',
        email,
        email_key: email,
        country: '101',
        created_at: now,
        updated_at: now,
      });
    }
    // Inserted directly: the API path is tested elsewhere, this is about the list's batching.
    for (let i = 0; i < rows.length; i += 500)
      await t.database.db
        .insertInto('contacts')
        .values(rows.slice(i, i + 500))
        .execute();
    await make.contact(t.b);
  });
  after(() => t.close());

  it('streams more than one 1,000-row batch as valid JSON, every row once, newest first', async () => {
    const r = await t.a.get('/contacts/list');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
    const list = r.body.message.contacts;
    assert.equal(list.length, MANY);
    const ids = list.map((c: { id: number }) => c.id);
    assert.equal(new Set(ids).size, MANY);
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1] > ids[i], `not descending at ${i}`);
    assert.deepEqual(Object.keys(r.body), ['status', 'message']);
    assert.deepEqual(Object.keys(r.body.message), ['contacts']);
    assert.ok(list.every((c: { user_id: number }) => c.user_id === t.a.keys!.user_id));
    assert.equal(list[0].contact_type.id, typeId);
    assert.equal(list[MANY - 1].contact_type.id, typeId);
  });

  it('streams the same list gzip-compressed', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/contacts/list',
      headers: { publickey: t.a.keys!.public_key, secretkey: t.a.keys!.secret_key, 'accept-encoding': 'gzip' },
    });
    assert.equal(res.headers['content-encoding'], 'gzip');
    const body = JSON.parse(gunzipSync(res.rawPayload).toString('utf8'));
    assert.equal(body.message.contacts.length, MANY);
  });

  it('streams an empty list as an empty array', async () => {
    const r = await t.a.get('/custom-fields');
    assert.deepEqual(r.body, { status: 'success', message: { customFields: [] } });
  });

  it('pages with meta; pages join up to the whole list with no gaps or repeats', async () => {
    const all = (await t.a.get('/contacts/list')).body.message.contacts.map((c: { id: number }) => c.id);
    const seen: number[] = [];
    for (let page = 1; page <= 4; page++) {
      const r = await t.a.get('/contacts/list', { page, per_page: 1000 });
      assert.equal(r.status, 200);
      assert.deepEqual(r.body.message.meta, { page, per_page: 1000, total: MANY });
      seen.push(...r.body.message.contacts.map((c: { id: number }) => c.id));
    }
    assert.deepEqual(seen, all);
  });

  it('defaults per_page to 50 when only page is given, and page to 1 when only per_page is', async () => {
    const p = await t.a.get('/contacts/list', { page: 2 });
    assert.deepEqual(p.body.message.meta, { page: 2, per_page: 50, total: MANY });
    assert.equal(p.body.message.contacts.length, 50);
    const q = await t.a.get('/contacts/list', { per_page: 7 });
    assert.deepEqual(q.body.message.meta, { page: 1, per_page: 7, total: MANY });
    assert.equal(q.body.message.contacts.length, 7);
  });

  it('answers a page past the end with an empty array and the total', async () => {
    const r = await t.a.get('/contacts/list', { page: 999, per_page: 10 });
    assert.deepEqual(r.body.message, { contacts: [], meta: { page: 999, per_page: 10, total: MANY } });
  });

  it('rejects bad paging values with field errors', async () => {
    const r = await t.a.get('/contacts/list', { page: 0, per_page: 1001 });
    assert.equal(r.status, 422);
    assert.deepEqual(
      r.body,
      fieldErrors({ page: ['The page must be at least 1.'], per_page: ['The per page must not be greater than 1000.'] }),
    );
    const text = await t.a.get('/contacts/list', { page: 'abc' });
    assert.deepEqual(text.body, fieldErrors({ page: ['The page must be an integer.'] }));
  });

  it('leaves soft-deleted rows out of lists, counts and pages', async () => {
    const victims = (await t.a.get('/contacts/list', { per_page: 3 })).body.message.contacts.map((c: { id: number }) => c.id);
    assert.equal((await t.a.post('/contacts/bulk-delete', { strIds: victims })).status, 200);
    const r = await t.a.get('/contacts/list', { per_page: 5 });
    assert.equal(r.body.message.meta.total, MANY - 3);
    assert.ok(r.body.message.contacts.every((c: { id: number }) => !victims.includes(c.id)));
    const all = await t.a.get('/contacts/list');
    assert.equal(all.body.message.contacts.length, MANY - 3);
  });

  it("never shows another account's rows", async () => {
    const r = await t.b.get('/contacts/list');
    assert.equal(r.body.message.contacts.length, 1);
    assert.equal(r.body.message.contacts[0].user_id, t.b.keys!.user_id);
  });
});
