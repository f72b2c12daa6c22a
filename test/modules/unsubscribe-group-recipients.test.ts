import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrors, setup, type TestContext } from '../helpers.js';
import { RNF, addGroup, recipients, addRecipients } from './unsubscribe-groups.helpers.js';

describe('unsubscribe group recipients', () => {
  let t: TestContext;
  let group: number;
  before(async () => {
    t = await setup();
    group = await addGroup(t.a, { group_name: 'Recipients' });
  });
  after(() => t.close());

  it('adds a comma-separated list and returns the text with the ids', async () => {
    const r = await t.a.post('/unsubscribes-groups/manually-add', {
      unsubscribe_groups_id: group,
      email_address: 'r1@example.com , r2@example.com',
    });
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body), ['status', 'message', 'id', 'ids']);
    assert.equal(r.body.message, 'Added Successfully');
    assert.equal(r.body.ids.length, 2);
    assert.equal(r.body.id, r.body.ids[0]);
    const list = await recipients(t.a, group);
    const entry = list.find((e) => e.id === r.body.id)!;
    assert.deepEqual(Object.keys(entry), ['id', 'user_id', 'unsubscribe_groups_id', 'email_address', 'created_at', 'updated_at']);
    assert.equal(entry.unsubscribe_groups_id, group);
    assert.equal(entry.email_address, 'r1@example.com');
  });

  it('treats an address already in the group as a no-op; the same address may be global and in groups', async () => {
    const [id] = await addRecipients(t.a, group, 'same@example.com');
    const count = (await recipients(t.a, group)).length;
    assert.deepEqual(await addRecipients(t.a, group, 'SAME@example.com'), [id]);
    assert.equal((await recipients(t.a, group)).length, count);
    const other = await addGroup(t.a, { group_name: 'Other' });
    const [inOther] = await addRecipients(t.a, other, 'same@example.com');
    assert.notEqual(inOther, id);
    const global = await t.a.post('/global-unsubscribes/save', { email_address: 'same@example.com' });
    assert.equal(global.status, 200);
    assert.ok(![id, inOther].includes(global.body.id));
  });

  it('reports missing fields, a foreign group and a bad address together', async () => {
    const missing = await t.a.post('/unsubscribes-groups/manually-add', {});
    assert.equal(missing.status, 422);
    assert.deepEqual(
      missing.body,
      fieldErrors({
        unsubscribe_groups_id: ['The unsubscribe groups id field is required.'],
        email_address: ['The email address field is required.'],
      }),
    );
    const theirs = await addGroup(t.b);
    const foreign = await t.a.post('/unsubscribes-groups/manually-add', {
      unsubscribe_groups_id: theirs,
      email_address: 'ok@example.com, bad@',
    });
    assert.deepEqual(
      foreign.body,
      fieldErrors({
        unsubscribe_groups_id: ['The selected unsubscribe groups id is invalid.'],
        email_address: ['The email address must be a valid email address.'],
      }),
    );
    assert.equal((await recipients(t.b, theirs)).length, 0);
    const notInt = await t.a.post('/unsubscribes-groups/manually-add', { unsubscribe_groups_id: 'abc', email_address: 'ok@example.com' });
    assert.deepEqual(notInt.body, fieldErrors({ unsubscribe_groups_id: ['The unsubscribe groups id must be an integer.'] }));
    const unknown = await t.a.post('/unsubscribes-groups/manually-add', {
      unsubscribe_groups_id: 99999999,
      email_address: 'ok@example.com',
    });
    assert.deepEqual(unknown.body, fieldErrors({ unsubscribe_groups_id: ['The selected unsubscribe groups id is invalid.'] }));
    assert.ok(!(await recipients(t.a, group)).some((e) => e.email_address === 'ok@example.com'));
  });

  it('lists only that group recipients, newest first; other groups and accounts are Record Not Found', async () => {
    const list = await recipients(t.a, group);
    assert.ok(list.length >= 3);
    assert.ok(list.every((e) => e.unsubscribe_groups_id === group));
    const ids = list.map((e) => e.id);
    assert.deepEqual(
      ids,
      [...ids].sort((x, y) => y - x),
    );
    const page = await t.a.get('/unsubscribes-groups/recipients-list', { groupId: group, per_page: 1 });
    assert.equal(page.body.message.recipients.length, 1);
    assert.deepEqual(page.body.message.meta, { page: 1, per_page: 1, total: list.length });
    // A page is serialised through the route's response schema, the whole list is streamed: same records.
    assert.deepEqual(
      (await t.a.get('/unsubscribes-groups/recipients-list', { groupId: group, per_page: 100 })).body.message.recipients,
      list,
    );
    for (const query of [{ groupId: group }, { groupId: 99999999 }, { groupId: 'x' }, undefined]) {
      const r = await t.b.get('/unsubscribes-groups/recipients-list', query);
      assert.equal(r.status, 404);
      assert.deepEqual(r.body, RNF);
    }
  });

  it('deletes one recipient; foreign, unknown and global ids are Record Not Found', async () => {
    const [id] = await addRecipients(t.a, group, 'gone@example.com');
    const foreign = await t.b.delete('/unsubscribes-groups/recipients-delete', { id });
    assert.equal(foreign.status, 404);
    assert.deepEqual(foreign.body, RNF);
    assert.ok((await recipients(t.a, group)).some((e) => e.id === id));
    const r = await t.a.delete('/unsubscribes-groups/recipients-delete', { id });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { status: 'success', message: 'Deleted Successfully' });
    assert.ok(!(await recipients(t.a, group)).some((e) => e.id === id));
    const global = await t.a.post('/global-unsubscribes/save', { email_address: 'global-only@example.com' });
    for (const query of [{ id }, { id: global.body.id }, { id: 'abc' }, undefined]) {
      const again = await t.a.delete('/unsubscribes-groups/recipients-delete', query);
      assert.equal(again.status, 404);
      assert.deepEqual(again.body, RNF);
    }
    const globals = (await t.a.get('/global-unsubscribes')).body.message.unSubscribers;
    assert.ok(globals.some((e: { id: number }) => e.id === global.body.id));
  });

  it('bulk-deletes the account recipients among the ids; none of them is Record Not Found', async () => {
    const mine = await addRecipients(t.a, group, 'b1@example.com,b2@example.com');
    const theirGroup = await addGroup(t.b);
    const [theirs] = await addRecipients(t.b, theirGroup, 'b3@example.com');
    const r = await t.a.post('/unsubscribes-groups/recipients-bulk-delete', { strIds: [...mine, theirs, 99999999] });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { status: 'success', message: 'Deleted Successfully' });
    assert.ok(!(await recipients(t.a, group)).some((e) => mine.includes(e.id)));
    assert.ok((await recipients(t.b, theirGroup)).some((e) => e.id === theirs));
    const none = await t.a.post('/unsubscribes-groups/recipients-bulk-delete', { strIds: [theirs] });
    assert.equal(none.status, 404);
    assert.deepEqual(none.body, RNF);
    const missing = await t.a.post('/unsubscribes-groups/recipients-bulk-delete', {});
    assert.equal(missing.status, 422);
    assert.deepEqual(missing.body, fieldErrors({ strIds: ['The str ids field is required.'] }));
  });
});
