import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrors, make, setup, type TestContext } from '../helpers.js';

const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

describe('contact types', () => {
  let t: TestContext;
  before(async () => {
    t = await setup();
  });
  after(() => t.close());

  it('adds a contact type and returns its id beside the text', async () => {
    const r = await t.a.post('/contacts-type/add', { name: 'Customers' });
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body), ['status', 'message', 'id']);
    assert.equal(r.body.message, 'Added Successfully');
    assert.ok(Number.isInteger(r.body.id));
  });

  it('rejects a missing name and a one-character name', async () => {
    const missing = await t.a.post('/contacts-type/add', {});
    assert.equal(missing.status, 422);
    assert.deepEqual(missing.body, fieldErrors({ name: ['The name field is required.'] }));
    const short = await t.a.post('/contacts-type/add', { name: 'x' });
    assert.deepEqual(short.body, fieldErrors({ name: ['The name must be at least 2 characters.'] }));
    const blank = await t.a.post('/contacts-type/add', { name: '   ' });
    assert.deepEqual(blank.body, fieldErrors({ name: ['The name field is required.'] }));
  });

  it('rejects a duplicate name in the same account, case-insensitively, but not across accounts', async () => {
    await make.contactType(t.a, 'Partners');
    const dup = await t.a.post('/contacts-type/add', { name: 'PARTNERS' });
    assert.equal(dup.status, 422);
    assert.deepEqual(dup.body, fieldErrors({ name: ['The name has already been taken.'] }));
    const other = await t.b.post('/contacts-type/add', { name: 'Partners' });
    assert.equal(other.status, 200);
  });

  it('lists newest first with contacts_count', async () => {
    const id = await make.contactType(t.a, 'Listed');
    await make.contact(t.a, { contact_type_id: id });
    await make.contact(t.a, { contact_type_id: id });
    const r = await t.a.get('/contacts-type');
    assert.equal(r.status, 200);
    assert.equal(r.body.status, 'success');
    const list = r.body.message.contactTypes;
    assert.equal(list[0].id, id);
    assert.equal(list[0].contacts_count, 2);
    assert.deepEqual(Object.keys(list[0]), ['id', 'user_id', 'name', 'deleted_at', 'created_at', 'updated_at', 'contacts_count']);
    assert.match(list[0].created_at, TS);
    const ids = list.map((x: { id: number }) => x.id);
    assert.deepEqual(
      ids,
      [...ids].sort((x, y) => y - x),
    );
    const other = await t.b.get('/contacts-type');
    assert.ok(other.body.message.contactTypes.every((x: { user_id: number }) => x.user_id === t.b.keys!.user_id));
  });

  it('pages a list with meta', async () => {
    const r = await t.a.get('/contacts-type', { page: 1, per_page: 2 });
    assert.equal(r.body.message.contactTypes.length, 2);
    assert.equal(r.body.message.meta.page, 1);
    assert.equal(r.body.message.meta.per_page, 2);
    assert.ok(r.body.message.meta.total >= 3);
    const bad = await t.a.get('/contacts-type', { per_page: 5000 });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body, fieldErrors({ per_page: ['The per page must not be greater than 1000.'] }));
  });

  it('views one without contacts_count; a missing or unknown id is a field error', async () => {
    const id = await make.contactType(t.a, 'Viewed');
    const r = await t.a.get('/contacts-type/view', { contact_type_id: id });
    assert.equal(r.status, 200);
    assert.equal(r.body.message.contactType.name, 'Viewed');
    assert.equal('contacts_count' in r.body.message.contactType, false);
    const missing = await t.a.get('/contacts-type/view');
    assert.deepEqual(missing.body, fieldErrors({ contact_type_id: ['The contact type id field is required.'] }));
    const unknown = await t.a.get('/contacts-type/view', { contact_type_id: 999999 });
    assert.equal(unknown.status, 422);
    assert.deepEqual(unknown.body, fieldErrors({ contact_type_id: ['The selected contact type id is invalid.'] }));
    const foreign = await t.b.get('/contacts-type/view', { contact_type_id: id });
    assert.deepEqual(foreign.body, fieldErrors({ contact_type_id: ['The selected contact type id is invalid.'] }));
  });

  it('updates the name; unknown or foreign ids are Record Not Found and change nothing', async () => {
    const id = await make.contactType(t.a, 'Before');
    const r = await t.a.post('/contacts-type/update', { id, name: 'After' });
    assert.deepEqual(r.body, { status: 'success', message: 'Updated Successfully' });
    const view = await t.a.get('/contacts-type/view', { contact_type_id: id });
    assert.equal(view.body.message.contactType.name, 'After');
    const foreign = await t.b.post('/contacts-type/update', { id, name: 'Hijacked' });
    assert.equal(foreign.status, 404);
    assert.deepEqual(foreign.body, { status: 'failed', errors: 'Record Not Found' });
    const again = await t.a.get('/contacts-type/view', { contact_type_id: id });
    assert.equal(again.body.message.contactType.name, 'After');
    const bad = await t.a.post('/contacts-type/update', { id: 'abc', name: 'y' });
    assert.deepEqual(bad.body, fieldErrors({ id: ['The id must be an integer.'], name: ['The name must be at least 2 characters.'] }));
  });

  it('deletes with the text in both errors and message, and soft-deletes its contacts', async () => {
    const id = await make.contactType(t.a, 'Doomed');
    const contactId = await make.contact(t.a, { contact_type_id: id });
    const foreign = await t.b.delete('/contacts-type/delete', { contact_type_id: id });
    assert.equal(foreign.status, 404);
    assert.deepEqual(foreign.body, { status: 'failed', errors: 'Record Not Found' });
    const r = await t.a.delete('/contacts-type/delete', { contact_type_id: id });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { status: 'success', errors: 'Deleted Successfully', message: 'Deleted Successfully' });
    const gone = await t.a.get('/contacts/details', { contact_id: contactId });
    assert.equal(gone.status, 404);
    const again = await t.a.delete('/contacts-type/delete', { contact_type_id: id });
    assert.deepEqual(again.body, { status: 'failed', errors: 'Record Not Found' });
    const list = await t.a.get('/contacts-type');
    assert.ok(!list.body.message.contactTypes.some((x: { id: number }) => x.id === id));
  });
});
