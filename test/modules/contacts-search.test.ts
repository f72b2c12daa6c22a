import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertNeedsKeys, make, setup, type TestContext } from '../helpers.js';

describe('GET /contacts/search', () => {
  let t: TestContext;
  let typeId: number;
  const ids: Record<string, number> = {};

  before(async () => {
    t = await setup();
    typeId = await make.contactType(t.a, 'Customers');
    const other = await make.contactType(t.a, 'Newsletter');
    for (const email of ['ada@example.com', 'Adam@Example.org', 'a.d@example.com', 'bob@example.com', 'ab@example.com'])
      ids[email] = await make.contact(t.a, { contact_type_id: typeId, email });
    ids['adele@example.net'] = await make.contact(t.a, { contact_type_id: other, email: 'adele@example.net' });
    ids.gone = await make.contact(t.a, { contact_type_id: typeId, email: 'adrian@example.com' });
    await t.a.delete('/contacts/delete', { contact_id: ids.gone });
    await make.contact(t.b, { email: 'adalbert@example.com' });
  });
  after(() => t.close());

  const emails = (r: { body: any }) => r.body.message.contacts.map((c: { email: string }) => c.email);

  it('finds the live contacts whose email starts with q, any case, across contact types, in address order', async () => {
    const r = await t.a.get('/contacts/search', { q: 'AD' });
    assert.equal(r.status, 200);
    assert.deepEqual(emails(r), ['ada@example.com', 'Adam@Example.org', 'adele@example.net']);
    assert.deepEqual(r.body.message.meta, { page: 1, per_page: 50, has_more: false });
    const ada = r.body.message.contacts[0];
    assert.equal(ada.id, ids['ada@example.com']);
    assert.equal(ada.contact_type.name, 'Customers');
    assert.equal(ada.country, 'India');
  });

  it('compares bytes: punctuation is not skipped, and LIKE wildcards are plain characters', async () => {
    assert.deepEqual(emails(await t.a.get('/contacts/search', { q: 'ab' })), ['ab@example.com']);
    assert.deepEqual(emails(await t.a.get('/contacts/search', { q: 'a.' })), ['a.d@example.com']);
    assert.deepEqual(emails(await t.a.get('/contacts/search', { q: 'a%' })), []);
    assert.deepEqual(emails(await t.a.get('/contacts/search', { q: 'a_' })), []);
  });

  it('pages with page and per_page, saying whether another page follows', async () => {
    const first = await t.a.get('/contacts/search', { q: 'a', per_page: 2 });
    assert.deepEqual(emails(first), ['a.d@example.com', 'ab@example.com']);
    assert.deepEqual(first.body.message.meta, { page: 1, per_page: 2, has_more: true });
    const last = await t.a.get('/contacts/search', { q: 'a', per_page: 2, page: 3 });
    assert.deepEqual(emails(last), ['adele@example.net']);
    assert.equal(last.body.message.meta.has_more, false);
  });

  it('lists every live contact, newest first, without q', async () => {
    const r = await t.a.get('/contacts/search', { per_page: 3 });
    assert.deepEqual(emails(r), ['adele@example.net', 'ab@example.com', 'bob@example.com']);
    assert.equal(r.body.message.meta.has_more, true);
  });

  it("never shows another account's contacts", async () => {
    assert.deepEqual(emails(await t.a.get('/contacts/search', { q: 'adal' })), []);
    assert.deepEqual(emails(await t.b.get('/contacts/search', { q: 'ad' })), ['adalbert@example.com']);
  });

  it('refuses a bad page or page size, and needs the keys', async () => {
    for (const query of [{ per_page: 0 }, { per_page: 1001 }, { page: 0 }, { page: 'x' }]) {
      const r = await t.a.get('/contacts/search', query);
      assert.equal(r.status, 422, JSON.stringify(query));
      assert.equal(r.body.status, 'failed');
    }
    await assertNeedsKeys(t.anon, [['GET', '/contacts/search']]);
  });
});
