import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrors, setup, type TestContext, assertNeedsKeys } from '../helpers.js';
import { unsubscribedKeys } from '../../src/suppression/suppression.reads.js';
import { TS, RNF, GROUP_KEYS, addGroup, details, addRecipients } from './unsubscribe-groups.helpers.js';

describe('unsubscribe groups', () => {
  let t: TestContext;
  before(async () => {
    t = await setup();
  });
  after(() => t.close());

  it('requires both key headers on every endpoint', async () => {
    await assertNeedsKeys(t.anon, [
      ['GET', '/unsubscribes-groups'],
      ['POST', '/unsubscribes-groups/save'],
      ['GET', '/unsubscribes-groups/details'],
      ['POST', '/unsubscribes-groups/update'],
      ['DELETE', '/unsubscribes-groups/delete'],
      ['POST', '/unsubscribes-groups/manually-add'],
      ['GET', '/unsubscribes-groups/recipients-list'],
      ['DELETE', '/unsubscribes-groups/recipients-delete'],
      ['POST', '/unsubscribes-groups/recipients-bulk-delete'],
    ]);
  });

  it('saves a group and returns the text with its id; details show it without a count', async () => {
    const r = await t.a.post('/unsubscribes-groups/save', { group_name: 'Promotions', description: 'Offers and sales', is_display: 1 });
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body), ['status', 'message', 'id']);
    assert.equal(r.body.message, 'Saved Successfully');
    const d = await details(t.a, r.body.id);
    assert.equal(d.status, 200);
    assert.equal(d.body.status, 'success');
    const g = d.body.message.unsubscribesGroup;
    assert.deepEqual(Object.keys(g), GROUP_KEYS);
    assert.equal(g.id, r.body.id);
    assert.equal(g.user_id, t.a.keys!.user_id);
    assert.equal(g.group_name, 'Promotions');
    assert.equal(g.description, 'Offers and sales');
    assert.equal(g.is_display, 1);
    assert.match(g.rand_id, /^\d+$/);
    assert.match(g.created_at, TS);
    assert.match(g.updated_at, TS);
  });

  it('gives every group its own numeric rand_id', async () => {
    const ids = [await addGroup(t.a), await addGroup(t.a), await addGroup(t.b)];
    const rands = await Promise.all(
      ids.map(async (id, i) => (await details(i < 2 ? t.a : t.b, id)).body.message.unsubscribesGroup.rand_id),
    );
    assert.equal(new Set(rands).size, 3);
  });

  it('accepts the boolean forms 0, 1, true and false for is_display', async () => {
    const zero = await addGroup(t.a, { is_display: '0' });
    assert.equal((await details(t.a, zero)).body.message.unsubscribesGroup.is_display, 0);
    const json = await t.a.request('POST', '/unsubscribes-groups/save', { json: { group_name: 'J', description: 'j', is_display: false } });
    assert.equal(json.status, 200);
    assert.equal((await details(t.a, json.body.id)).body.message.unsubscribesGroup.is_display, 0);
    const jsonTrue = await t.a.request('POST', '/unsubscribes-groups/save', {
      json: { group_name: 'J', description: 'j', is_display: true },
    });
    assert.equal((await details(t.a, jsonTrue.body.id)).body.message.unsubscribesGroup.is_display, 1);
  });

  it('reports every missing field of save together', async () => {
    const r = await t.a.post('/unsubscribes-groups/save', { group_name: '  ' });
    assert.equal(r.status, 422);
    assert.deepEqual(
      r.body,
      fieldErrors({
        group_name: ['The group name field is required.'],
        description: ['The description field is required.'],
        is_display: ['The is display field is required.'],
      }),
    );
  });

  it('rejects an is_display other than 0 or 1 with the boolean message, beside other failures', async () => {
    for (const is_display of ['yes', '2', 'true']) {
      const r = await t.a.post('/unsubscribes-groups/save', { group_name: 'X', description: 'y', is_display });
      assert.equal(r.status, 422, is_display);
      assert.deepEqual(r.body, fieldErrors({ is_display: ['The is display field must be true or false.'] }));
    }
    const both = await t.a.post('/unsubscribes-groups/save', { description: 'y', is_display: 5 });
    assert.deepEqual(
      both.body,
      fieldErrors({ group_name: ['The group name field is required.'], is_display: ['The is display field must be true or false.'] }),
    );
    const long = await t.a.post('/unsubscribes-groups/save', { group_name: 'x'.repeat(256), description: 'y', is_display: 1 });
    assert.deepEqual(long.body, fieldErrors({ group_name: ['The group name must not be greater than 255 characters.'] }));
  });

  it('lists the account groups newest first with unsubscribe_clients_count', async () => {
    const id = await addGroup(t.a, { group_name: 'Counted' });
    await addRecipients(t.a, id, 'c1@example.com,c2@example.com');
    const foreign = await addGroup(t.b, { group_name: 'Theirs' });
    const r = await t.a.get('/unsubscribes-groups');
    assert.equal(r.status, 200);
    const list = r.body.message.unsubscribesGroups;
    assert.equal(list[0].id, id);
    assert.deepEqual(Object.keys(list[0]), [...GROUP_KEYS, 'unsubscribe_clients_count']);
    assert.equal(list[0].unsubscribe_clients_count, 2);
    assert.equal(list[1].unsubscribe_clients_count, 0);
    assert.ok(list.every((g: { user_id: number }) => g.user_id === t.a.keys!.user_id));
    assert.ok(!list.some((g: { id: number }) => g.id === foreign));
    const ids = list.map((g: { id: number }) => g.id);
    assert.deepEqual(
      ids,
      [...ids].sort((x: number, y: number) => y - x),
    );
    const page = await t.a.get('/unsubscribes-groups', { page: 2, per_page: 1 });
    assert.equal(page.body.message.unsubscribesGroups[0].id, ids[1]);
    assert.deepEqual(page.body.message.meta, { page: 2, per_page: 1, total: ids.length });
    // A page is serialised through the route's response schema, the whole list is streamed: same records.
    assert.deepEqual((await t.a.get('/unsubscribes-groups', { per_page: 100 })).body.message.unsubscribesGroups, list);
  });

  it('answers Record Not Found for details of an unknown, malformed, missing or foreign id', async () => {
    const theirs = await addGroup(t.b);
    for (const id of [theirs, 99999999, 'abc', '-1', undefined]) {
      const r = await details(t.a, id);
      assert.equal(r.status, 404, String(id));
      assert.deepEqual(r.body, RNF);
    }
  });

  it('updates a group by the id in the query', async () => {
    const id = await addGroup(t.a, { group_name: 'Before', description: 'old', is_display: 1 });
    const r = await t.a.post('/unsubscribes-groups/update', { group_name: 'After', description: 'new', is_display: 0 }, { id });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { status: 'success', message: 'Updated Successfully' });
    const g = (await details(t.a, id)).body.message.unsubscribesGroup;
    assert.equal(g.group_name, 'After');
    assert.equal(g.description, 'new');
    assert.equal(g.is_display, 0);
  });

  it('reports the field failures of an update and changes nothing', async () => {
    const id = await addGroup(t.a, { group_name: 'Kept' });
    const r = await t.a.post('/unsubscribes-groups/update', { description: 'x', is_display: 'maybe' }, { id });
    assert.equal(r.status, 422);
    assert.deepEqual(
      r.body,
      fieldErrors({ group_name: ['The group name field is required.'], is_display: ['The is display field must be true or false.'] }),
    );
    assert.equal((await details(t.a, id)).body.message.unsubscribesGroup.group_name, 'Kept');
  });

  it('answers Record Not Found for an update of an unknown or foreign group and leaves it unchanged', async () => {
    const id = await addGroup(t.a, { group_name: 'Mine' });
    const body = { group_name: 'Hijacked', description: 'x', is_display: 0 };
    for (const query of [{ id }, { id: 99999999 }, { id: 'x' }, undefined]) {
      const r = await t.b.post('/unsubscribes-groups/update', body, query);
      assert.equal(r.status, 404);
      assert.deepEqual(r.body, RNF);
    }
    const inBody = await t.a.post('/unsubscribes-groups/update', { id, ...body });
    assert.deepEqual(inBody.body, RNF);
    assert.equal((await details(t.a, id)).body.message.unsubscribesGroup.group_name, 'Mine');
  });

  it('deletes a group: hidden everywhere, its recipients still suppress mail sent under it', async () => {
    const id = await addGroup(t.a, { group_name: 'Doomed' });
    await addRecipients(t.a, id, 'kept@example.com');
    const foreign = await t.b.delete('/unsubscribes-groups/delete', { id });
    assert.equal(foreign.status, 404);
    assert.deepEqual(foreign.body, RNF);
    assert.equal((await details(t.a, id)).status, 200);
    const r = await t.a.delete('/unsubscribes-groups/delete', { id });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { status: 'success', message: 'Deleted Successfully' });
    assert.deepEqual((await details(t.a, id)).body, RNF);
    const list = (await t.a.get('/unsubscribes-groups')).body.message.unsubscribesGroups;
    assert.ok(!list.some((g: { id: number }) => g.id === id));
    assert.deepEqual((await t.a.get('/unsubscribes-groups/recipients-list', { groupId: id })).body, RNF);
    assert.deepEqual(
      (await t.a.post('/unsubscribes-groups/update', { group_name: 'x', description: 'x', is_display: 1 }, { id })).body,
      RNF,
    );
    const add = await t.a.post('/unsubscribes-groups/manually-add', { unsubscribe_groups_id: id, email_address: 'x@example.com' });
    assert.deepEqual(add.body, fieldErrors({ unsubscribe_groups_id: ['The selected unsubscribe groups id is invalid.'] }));
    const suppressed = await unsubscribedKeys(t.database.db, t.a.keys!.user_id, ['kept@example.com'], id);
    assert.deepEqual([...suppressed], ['kept@example.com']);
    for (const query of [{ id }, { id: 'abc' }, undefined]) {
      assert.deepEqual((await t.a.delete('/unsubscribes-groups/delete', query)).body, RNF);
    }
  });
});
