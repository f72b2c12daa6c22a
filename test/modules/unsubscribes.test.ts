import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrors, setup, type Client, type TestContext, assertNeedsKeys } from '../helpers.js';
import { unsubscribeEmail } from '../../src/modules/unsubscribes/unsubscribes.service.js';
import { unsubscribedKeys, unsubscribeEntriesOf } from '../../src/suppression/suppression.reads.js';
import type { Db } from '../../src/db/index.js';

/** The keys of `emails` (lower-cased) on the account's lists that stop mail under `groupId`, sorted. */
const stoppedKeys = async (db: Db, userId: number, emails: string[], groupId: number | null = null) =>
  [...(await unsubscribedKeys(db, userId, [...new Set(emails.map((e) => e.toLowerCase()))], groupId))].sort();
import { NotFound, ValidationError } from '../../src/http/errors.js';

const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const RNF = { status: 'failed', errors: 'Record Not Found' };
const DELETED = { status: 'success', message: 'Deleted Successfully' };

type Entry = { id: number; user_id: number; unsubscribe_groups_id: number | null; email_address: string };

async function globalList(c: Client): Promise<Entry[]> {
  const r = await c.get('/global-unsubscribes');
  assert.equal(r.status, 200);
  return r.body.message.unSubscribers;
}

async function addGlobal(c: Client, email_address: string): Promise<number[]> {
  const r = await c.post('/global-unsubscribes/save', { email_address });
  assert.equal(r.status, 200, r.text);
  return r.body.ids;
}

async function addGroup(c: Client, name = 'Newsletter'): Promise<number> {
  const r = await c.post('/unsubscribes-groups/save', { group_name: name, description: 'd', is_display: 1 });
  assert.equal(r.status, 200, r.text);
  return r.body.id;
}

describe('global unsubscribes', () => {
  let t: TestContext;
  before(async () => {
    t = await setup();
  });
  after(() => t.close());

  it('requires both key headers on every endpoint', async () => {
    await assertNeedsKeys(t.anon, [
      ['GET', '/global-unsubscribes'],
      ['POST', '/global-unsubscribes/save'],
      ['DELETE', '/global-unsubscribes/delete'],
      ['POST', '/global-unsubscribes/bulk-delete'],
    ]);
  });

  it('adds one address and returns the text with the new id', async () => {
    const r = await t.a.post('/global-unsubscribes/save', { email_address: 'first@example.com' });
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body), ['status', 'message', 'id', 'ids']);
    assert.equal(r.body.status, 'success');
    assert.equal(r.body.message, 'Added Successfully');
    assert.ok(Number.isInteger(r.body.id));
    assert.deepEqual(r.body.ids, [r.body.id]);
    const entry = (await globalList(t.a)).find((e) => e.id === r.body.id)!;
    assert.deepEqual(Object.keys(entry), ['id', 'user_id', 'unsubscribe_groups_id', 'email_address', 'created_at', 'updated_at']);
    assert.equal(entry.user_id, t.a.keys!.user_id);
    assert.equal(entry.unsubscribe_groups_id, null);
    assert.equal(entry.email_address, 'first@example.com');
    assert.match((entry as any).created_at, TS);
    assert.match((entry as any).updated_at, TS);
  });

  it('adds every address of a comma-separated list, each trimmed, skipping empty items', async () => {
    const ids = await addGlobal(t.a, ' one@example.com ,two@example.com,, three@example.org ,');
    assert.equal(ids.length, 3);
    const list = await globalList(t.a);
    assert.deepEqual(
      ids.map((id) => list.find((e) => e.id === id)?.email_address),
      ['one@example.com', 'two@example.com', 'three@example.org'],
    );
  });

  it('treats an address already present as a no-op, compared case-insensitively', async () => {
    const [id] = await addGlobal(t.a, 'Dup@Example.com');
    const before = await globalList(t.a);
    const again = await t.a.post('/global-unsubscribes/save', { email_address: 'dup@example.COM, DUP@example.com' });
    assert.equal(again.status, 200);
    assert.equal(again.body.message, 'Added Successfully');
    assert.deepEqual(again.body.ids, [id]);
    const after = await globalList(t.a);
    assert.equal(after.length, before.length);
    assert.equal(after.find((e) => e.id === id)!.email_address, 'Dup@Example.com');
  });

  it('rejects a missing or blank email_address with the required message', async () => {
    for (const form of [{}, { email_address: '   ' }, { email_address: ' , ,' }]) {
      const r = await t.a.post('/global-unsubscribes/save', form);
      assert.equal(r.status, 422);
      assert.deepEqual(r.body, fieldErrors({ email_address: ['The email address field is required.'] }));
    }
  });

  it('fails the whole request when one address of the list is invalid, storing none', async () => {
    const r = await t.a.post('/global-unsubscribes/save', { email_address: 'good.one@example.com, not-an-email' });
    assert.equal(r.status, 422);
    assert.deepEqual(r.body, fieldErrors({ email_address: ['The email address must be a valid email address.'] }));
    assert.ok(!(await globalList(t.a)).some((e) => e.email_address === 'good.one@example.com'));
    const spaced = await t.a.post('/global-unsubscribes/save', { email_address: 'a b@example.com' });
    assert.equal(spaced.status, 422);
  });

  it('accepts a JSON body with the same field', async () => {
    const r = await t.a.request('POST', '/global-unsubscribes/save', { json: { email_address: 'json@example.com' } });
    assert.equal(r.status, 200);
    assert.equal(r.body.message, 'Added Successfully');
  });

  it('lists only the account global entries, newest first, and pages with meta', async () => {
    await addGlobal(t.b, 'b-only@example.com');
    const groupId = await addGroup(t.a);
    await t.a.post('/unsubscribes-groups/manually-add', { unsubscribe_groups_id: groupId, email_address: 'in-group@example.com' });
    const list = await globalList(t.a);
    assert.ok(list.length >= 5);
    assert.ok(list.every((e) => e.user_id === t.a.keys!.user_id && e.unsubscribe_groups_id === null));
    assert.ok(!list.some((e) => e.email_address === 'in-group@example.com' || e.email_address === 'b-only@example.com'));
    const ids = list.map((e) => e.id);
    assert.deepEqual(
      ids,
      [...ids].sort((x, y) => y - x),
    );
    const page = await t.a.get('/global-unsubscribes', { page: 1, per_page: 2 });
    assert.equal(page.body.message.unSubscribers.length, 2);
    assert.deepEqual(page.body.message.meta, { page: 1, per_page: 2, total: list.length });
    // A page is serialised through the route's response schema, the whole list is streamed: same records.
    assert.deepEqual((await t.a.get('/global-unsubscribes', { per_page: 100 })).body.message.unSubscribers, list);
  });

  it('deletes one entry; unknown, malformed, foreign and group ids are Record Not Found', async () => {
    const [id] = await addGlobal(t.a, 'delete-me@example.com');
    const foreign = await t.b.delete('/global-unsubscribes/delete', { id });
    assert.equal(foreign.status, 404);
    assert.deepEqual(foreign.body, RNF);
    assert.ok((await globalList(t.a)).some((e) => e.id === id));
    const r = await t.a.delete('/global-unsubscribes/delete', { id });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, DELETED);
    assert.ok(!(await globalList(t.a)).some((e) => e.id === id));
    for (const query of [{ id }, { id: 99999999 }, { id: 'abc' }, undefined]) {
      const again = await t.a.delete('/global-unsubscribes/delete', query);
      assert.equal(again.status, 404);
      assert.deepEqual(again.body, RNF);
    }
    const groupId = await addGroup(t.a, 'Group for delete');
    const added = await t.a.post('/unsubscribes-groups/manually-add', { unsubscribe_groups_id: groupId, email_address: 'g@example.com' });
    const viaGlobal = await t.a.delete('/global-unsubscribes/delete', { id: added.body.id });
    assert.deepEqual(viaGlobal.body, RNF);
  });

  it('bulk-deletes the account entries among the ids and ignores the others', async () => {
    const mine = await addGlobal(t.a, 'bulk1@example.com,bulk2@example.com');
    const [theirs] = await addGlobal(t.b, 'bulk-b@example.com');
    const r = await t.a.post('/global-unsubscribes/bulk-delete', { strIds: [...mine, theirs, 99999999] });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, DELETED);
    const list = await globalList(t.a);
    assert.ok(!list.some((e) => mine.includes(e.id)));
    assert.ok((await globalList(t.b)).some((e) => e.id === theirs));
  });

  it('answers Record Not Found when no id of a bulk delete is the account and 422 without strIds', async () => {
    const [theirs] = await addGlobal(t.b, 'bulk-b2@example.com');
    const none = await t.a.post('/global-unsubscribes/bulk-delete', { strIds: [theirs, 99999998] });
    assert.equal(none.status, 404);
    assert.deepEqual(none.body, RNF);
    assert.ok((await globalList(t.b)).some((e) => e.id === theirs));
    const missing = await t.a.post('/global-unsubscribes/bulk-delete', {});
    assert.equal(missing.status, 422);
    assert.deepEqual(missing.body, fieldErrors({ strIds: ['The str ids field is required.'] }));
    const bad = await t.a.post('/global-unsubscribes/bulk-delete', { strIds: ['x'] });
    assert.equal(bad.status, 422);
  });
});

describe('suppression and unsubscribe functions for delivery', () => {
  let t: TestContext;
  let a: number;
  let b: number;
  before(async () => {
    t = await setup();
    a = t.a.keys!.user_id;
    b = t.b.keys!.user_id;
  });
  after(() => t.close());

  it('returns the subset of a batch that is suppressed globally or in the given group, case-insensitively', async () => {
    const db = t.database.db;
    const groupId = await addGroup(t.a, 'Promotions');
    const otherGroup = await addGroup(t.a, 'Other');
    await addGlobal(t.a, 'Global@Example.com');
    await t.a.post('/unsubscribes-groups/manually-add', { unsubscribe_groups_id: groupId, email_address: 'grouped@example.com' });
    await t.a.post('/unsubscribes-groups/manually-add', { unsubscribe_groups_id: otherGroup, email_address: 'elsewhere@example.com' });
    const batch = ['global@example.COM', 'GROUPED@example.com', 'elsewhere@example.com', 'free@example.com'];
    assert.deepEqual(await stoppedKeys(db, a, batch), ['global@example.com']);
    assert.deepEqual(await stoppedKeys(db, a, batch, groupId), ['global@example.com', 'grouped@example.com']);
    assert.deepEqual(await stoppedKeys(db, b, batch, groupId), []);
    assert.deepEqual(await stoppedKeys(db, a, []), []);
    assert.deepEqual(await stoppedKeys(db, a, ['grouped@example.com'], groupId), ['grouped@example.com']);
    assert.deepEqual(await stoppedKeys(db, a, ['grouped@example.com']), []);
  });

  it('unsubscribeEmail reports whether the address is new on that list', async () => {
    const db = t.database.db;
    const groupId = await addGroup(t.a, 'Digest');
    assert.equal(await unsubscribeEmail(db, a, 'New.One@example.com', null, { now: new Date() }), true);
    assert.equal(await unsubscribeEmail(db, a, 'new.one@EXAMPLE.com', null, { now: new Date() }), false);
    assert.equal(await unsubscribeEmail(db, a, 'new.one@example.com', groupId, { now: new Date() }), true);
    assert.equal(await unsubscribeEmail(db, a, 'new.one@example.com', groupId, { now: new Date() }), false);
    assert.equal(await unsubscribeEmail(db, b, 'new.one@example.com', null, { now: new Date() }), true);
    const entries = await unsubscribeEntriesOf(db, a, 'new.one@example.com');
    assert.deepEqual(entries.map((e) => e.unsubscribe_groups_id).sort(), [groupId, null].sort());
    await assert.rejects(unsubscribeEmail(db, b, 'x@example.com', groupId, { now: new Date() }), NotFound);
    await assert.rejects(unsubscribeEmail(db, a, 'not an email', null, { now: new Date() }), ValidationError);
  });

  it('keeps one entry per address when the same address is unsubscribed concurrently', async () => {
    const db = t.database.db;
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        unsubscribeEmail(db, a, i % 2 ? 'race@example.com' : 'RACE@example.com', null, { now: new Date() }),
      ),
    );
    assert.equal(results.filter(Boolean).length, 1);
    const rows = await db
      .selectFrom('unsubscribers')
      .selectAll()
      .where('user_id', '=', a)
      .where('email_key', '=', 'race@example.com')
      .execute();
    assert.equal(rows.length, 1);
  });

  it('suppresses a large batch in chunks', async () => {
    const db = t.database.db;
    await addGlobal(t.a, 'chunk-hit@example.com');
    const batch = Array.from({ length: 12_000 }, (_, i) => `user${i}@example.com`);
    batch[11_000] = 'chunk-hit@example.com';
    assert.deepEqual(await stoppedKeys(db, a, batch), ['chunk-hit@example.com']);
  });
});
