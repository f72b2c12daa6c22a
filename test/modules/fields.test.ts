import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrors, make, setup, type TestContext } from '../helpers.js';

const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const RNF = { status: 'failed', errors: 'Record Not Found' };
const FIELD_KEYS = ['id', 'user_id', 'field_name', 'field_type', 'is_reserved', 'created_at', 'updated_at'];
const RESERVED: Array<[string, string]> = [
  ['first_name', 'text'],
  ['last_name', 'text'],
  ['email', 'text'],
  ['alt_email', 'text'],
  ['country', 'text'],
  ['state', 'text'],
  ['city', 'text'],
  ['address_line1', 'text'],
  ['address_line2', 'text'],
  ['state_province_region', 'text'],
  ['postal_code', 'text'],
  ['father_name', 'text'],
  ['designation', 'text'],
  ['company_name', 'text'],
  ['age', 'number'],
  ['birth_date', 'datetime-local'],
  ['join_date', 'datetime-local'],
];

describe('reserved and custom fields', () => {
  let t: TestContext;
  before(async () => {
    t = await setup();
  });
  after(() => t.close());

  const save = (field_name: unknown, field_type: unknown = 'text') => t.a.post('/custom-fields/save', { field_name, field_type });

  it('lists the 17 reserved fields (contact columns and six extras), newest first, the same for every account', async () => {
    const r = await t.a.get('/reserve-fields');
    assert.equal(r.status, 200);
    const list = r.body.message.reservedFields;
    assert.deepEqual(Object.keys(r.body.message), ['reservedFields']);
    assert.equal(list.length, 17);
    for (const f of list) {
      assert.deepEqual(Object.keys(f), FIELD_KEYS);
      assert.equal(f.user_id, null);
      assert.equal(f.is_reserved, 1);
      assert.equal(f.created_at, null);
    }
    const pairs = list.map((f: { field_name: string; field_type: string }) => [f.field_name, f.field_type]);
    assert.deepEqual([...pairs].reverse(), RESERVED);
    const ids = list.map((f: { id: number }) => f.id);
    assert.deepEqual(
      ids,
      [...ids].sort((x, y) => y - x),
    );
    assert.deepEqual((await t.b.get('/reserve-fields')).body, r.body);
  });

  it('saves a custom field and lists it with user_id, is_reserved 0 and timestamps', async () => {
    const r = await save('favourite_Colour_2', 'text');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.body), ['status', 'message', 'id']);
    assert.equal(r.body.message, 'Added Successfully');
    const list = (await t.a.get('/custom-fields')).body.message.customFields;
    const f = list.find((x: { id: number }) => x.id === r.body.id);
    assert.deepEqual(Object.keys(f), FIELD_KEYS);
    assert.equal(f.user_id, t.a.keys!.user_id);
    assert.equal(f.field_name, 'favourite_Colour_2');
    assert.equal(f.field_type, 'text');
    assert.equal(f.is_reserved, 0);
    assert.match(f.created_at, TS);
    assert.match(f.updated_at, TS);
  });

  it('accepts each of the three field types', async () => {
    for (const type of ['text', 'number', 'datetime-local'])
      assert.equal((await save(`typed_${type.replace('-', '_')}`, type)).status, 200);
  });

  it("lists only the account's own custom fields, newest first", async () => {
    await t.b.post('/custom-fields/save', { field_name: 'b_field', field_type: 'text' });
    const a = (await t.a.get('/custom-fields')).body.message.customFields;
    assert.ok(a.length >= 4);
    assert.ok(a.every((f: { user_id: number }) => f.user_id === t.a.keys!.user_id));
    const ids = a.map((f: { id: number }) => f.id);
    assert.deepEqual(
      ids,
      [...ids].sort((x, y) => y - x),
    );
    const b = (await t.b.get('/custom-fields')).body.message.customFields;
    assert.deepEqual(
      b.map((f: { field_name: string }) => f.field_name),
      ['b_field'],
    );
  });

  it('rejects names with other characters than letters, digits and underscore', async () => {
    for (const name of ['with space', 'dash-name', 'dot.name', 'ümlaut', 'semi;colon', 'new\nline']) {
      const r = await save(name);
      assert.equal(r.status, 422, name);
      assert.deepEqual(r.body, fieldErrors({ field_name: ['The field name format is invalid.'] }));
    }
  });

  it('rejects reserved and placeholder names, in any letter case', async () => {
    for (const name of ['first_name', 'AGE', 'Company_Name', 'full_name', 'sender_name', 'sender_address', 'UNSUBSCRIBE_PREFERENCES']) {
      const r = await save(name);
      assert.equal(r.status, 422, name);
      assert.deepEqual(r.body, fieldErrors({ field_name: ['The selected field name is invalid.'] }));
    }
  });

  it('rejects a duplicate name case-insensitively, but not in another account', async () => {
    assert.equal((await save('loyalty_tier')).status, 200);
    const dup = await save('LOYALTY_Tier', 'number');
    assert.equal(dup.status, 422);
    assert.deepEqual(dup.body, fieldErrors({ field_name: ['The field name has already been taken.'] }));
    assert.equal((await t.b.post('/custom-fields/save', { field_name: 'loyalty_tier', field_type: 'text' })).status, 200);
  });

  it('rejects an unknown field type', async () => {
    for (const type of ['date', 'TEXT', 'integer']) {
      const r = await save(`good_name_${type}`, type);
      assert.equal(r.status, 422, type);
      assert.deepEqual(r.body, fieldErrors({ field_type: ['The selected field type is invalid.'] }));
    }
  });

  it('reports both fields together: missing ones, and a taken name with a bad type', async () => {
    const r = await t.a.post('/custom-fields/save', {});
    assert.deepEqual(
      r.body,
      fieldErrors({ field_name: ['The field name field is required.'], field_type: ['The field type field is required.'] }),
    );
    const both = await save('email', 'color');
    assert.deepEqual(
      both.body,
      fieldErrors({ field_type: ['The selected field type is invalid.'], field_name: ['The selected field name is invalid.'] }),
    );
    const long = await save('x'.repeat(65));
    assert.deepEqual(long.body, fieldErrors({ field_name: ['The field name must not be greater than 64 characters.'] }));
  });

  it('deletes a custom field and drops its values from contacts', async () => {
    const field = await save('to_drop', 'number');
    await save('to_keep', 'text');
    const typeId = await make.contactType(t.a);
    const both = await make.contact(t.a, { contact_type_id: typeId, custom_field: { to_drop: '5', to_keep: 'k' } });
    const only = await make.contact(t.a, { contact_type_id: typeId, custom_field: { to_drop: '6' } });
    const r = await t.a.delete('/custom-fields/delete', { id: field.body.id });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { status: 'success', message: 'Deleted Successfully' });
    const c1 = (await t.a.get('/contacts/details', { contact_id: both })).body.message.contact;
    assert.deepEqual(c1.custom_field, { to_keep: { field_name: 'To Keep', field_value: 'k' } });
    const c2 = (await t.a.get('/contacts/details', { contact_id: only })).body.message.contact;
    assert.equal(c2.custom_field, null);
    const list = (await t.a.get('/custom-fields')).body.message.customFields;
    assert.ok(!list.some((f: { id: number }) => f.id === field.body.id));
    // The name is free again, and an old value does not come back with it.
    assert.equal((await save('to_drop', 'text')).status, 200);
    assert.equal((await t.a.get('/contacts/details', { contact_id: only })).body.message.contact.custom_field, null);
  });

  it("does not touch another account's contacts when deleting a field of the same name", async () => {
    const aField = await save('shared_name');
    assert.equal((await t.b.post('/custom-fields/save', { field_name: 'shared_name', field_type: 'text' })).status, 200);
    const bContact = await make.contact(t.b, { custom_field: { shared_name: 'stay' } });
    assert.equal((await t.a.delete('/custom-fields/delete', { id: aField.body.id })).status, 200);
    const c = (await t.b.get('/contacts/details', { contact_id: bContact })).body.message.contact;
    assert.deepEqual(c.custom_field, { shared_name: { field_name: 'Shared Name', field_value: 'stay' } });
  });

  it("answers another account's, reserved, unknown, malformed and missing ids with 404", async () => {
    const bField = await t.b.post('/custom-fields/save', { field_name: 'b_private', field_type: 'text' });
    const reservedId = (await t.a.get('/reserve-fields')).body.message.reservedFields[0].id;
    for (const query of [{ id: bField.body.id }, { id: reservedId }, { id: 999999 }, { id: 'abc' }, {}]) {
      const r = await t.a.delete('/custom-fields/delete', query);
      assert.equal(r.status, 404, JSON.stringify(query));
      assert.deepEqual(r.body, RNF);
    }
    const b = (await t.b.get('/custom-fields')).body.message.customFields;
    assert.ok(b.some((f: { id: number }) => f.id === bField.body.id));
    assert.equal((await t.a.get('/reserve-fields')).body.message.reservedFields.length, 17);
  });

  it('needs the keys', async () => {
    for (const path of ['/reserve-fields', '/custom-fields']) {
      const r = await t.anon.get(path);
      assert.equal(r.status, 401);
      assert.deepEqual(Object.keys(r.body.errors), ['PublicKey', 'SecretKey']);
    }
  });
});
