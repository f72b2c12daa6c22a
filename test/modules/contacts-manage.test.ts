import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrors, make } from '../helpers.js';
import { TS, RNF, CONTACT_KEYS, contactsSuite, MISSING_CONTACT_FIELDS } from './contacts.helpers.js';

describe('contacts: list, details, update, delete', () => {
  const s = contactsSuite();
  const { details, base } = s;

  describe('list', () => {
    it('lists newest first with the country name and a contact_type object without contacts_count', async () => {
      const id = await make.contact(s.t.a, { contact_type_id: s.typeId, country: 101, first_name: 'Newest', custom_field: { motto: 'm' } });
      const r = await s.t.a.get('/contacts/list');
      assert.equal(r.status, 200);
      const list = r.body.message.contacts;
      assert.equal(list[0].id, id);
      assert.equal(list[0].country, 'India');
      assert.deepEqual(Object.keys(list[0]), [...CONTACT_KEYS, 'contact_type']);
      assert.deepEqual(Object.keys(list[0].contact_type), ['id', 'user_id', 'name', 'deleted_at', 'created_at', 'updated_at']);
      assert.equal(list[0].contact_type.name, 'Customers');
      assert.deepEqual(list[0].custom_field, { motto: { field_name: 'Motto', field_value: 'm' } });
      const ids = list.map((c: { id: number }) => c.id);
      assert.deepEqual(
        ids,
        [...ids].sort((x, y) => y - x),
      );
    });

    it('shows no contact of another account', async () => {
      const bId = await make.contact(s.t.b);
      const a = await s.t.a.get('/contacts/list');
      assert.ok(a.body.message.contacts.every((c: { id: number; user_id: number }) => c.user_id === s.t.a.keys!.user_id && c.id !== bId));
    });
  });

  describe('details', () => {
    it('answers unknown, foreign, malformed, missing and deleted ids with 404 Record Not Found', async () => {
      const bId = await make.contact(s.t.b);
      const deleted = await make.contact(s.t.a, { contact_type_id: s.typeId });
      await s.t.a.delete('/contacts/delete', { contact_id: deleted });
      for (const query of [
        { contact_id: 999999 },
        { contact_id: bId },
        { contact_id: 'abc' },
        { contact_id: '1.5' },
        {},
        { contact_id: deleted },
      ]) {
        const r = await s.t.a.get('/contacts/details', query);
        assert.equal(r.status, 404, JSON.stringify(query));
        assert.deepEqual(r.body, RNF);
      }
    });
  });

  describe('update', () => {
    it('replaces the standard fields and keeps custom values that are not sent', async () => {
      const id = await make.contact(s.t.a, {
        contact_type_id: s.typeId,
        city: 'Pune',
        state: 'MH',
        custom_field: { motto: 'keep', shoe_size: '40' },
        designation: 'Dev',
      });
      const before = await details(id);
      await new Promise((r) => setTimeout(r, 5));
      const r = await s.t.a.post('/contacts/update', {
        contact_id: id,
        contact_type_id: s.typeId,
        email: before.email,
        country: 14,
        first_name: 'Changed',
        custom_field: { shoe_size: '41' },
      });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body, { status: 'success', message: 'Contact Updated Successfully' });
      const c = await details(id);
      assert.equal(c.first_name, 'Changed');
      assert.equal(c.last_name, '');
      assert.equal(c.country, '14');
      assert.equal(c.city, null);
      assert.equal(c.state, null);
      assert.equal(c.custom_field.motto.field_value, 'keep');
      assert.equal(c.custom_field.shoe_size.field_value, '41');
      assert.equal(c.custom_field.designation.field_value, 'Dev');
      assert.equal(c.created_at, before.created_at);
      assert.ok(c.updated_at > before.updated_at);
    });

    it('clears a custom value or reserved extra sent empty, in a form or as JSON null, and keeps the rest', async () => {
      const id = await make.contact(s.t.a, {
        contact_type_id: s.typeId,
        custom_field: { motto: 'gone', shoe_size: '40', designation: 'Dev' },
      });
      const email = (await details(id)).email;
      const form = await s.t.a.post('/contacts/update', {
        contact_id: id,
        contact_type_id: s.typeId,
        email,
        country: 101,
        'custom_field[motto]': ' ',
        'custom_field[designation]': '',
      });
      assert.equal(form.status, 200, form.text);
      assert.deepEqual((await details(id)).custom_field, { shoe_size: { field_name: 'Shoe Size', field_value: '40' } });
      const json = await s.t.a.request('POST', '/contacts/update', {
        json: { contact_id: id, contact_type_id: s.typeId, email, country: 101, custom_field: { shoe_size: null } },
      });
      assert.equal(json.status, 200, json.text);
      assert.equal((await details(id)).custom_field, null);
      // An empty value for a field that does not exist is still an unknown field.
      const unknown = await s.t.a.post('/contacts/update', {
        contact_id: id,
        contact_type_id: s.typeId,
        email,
        country: 101,
        'custom_field[nope]': '',
      });
      assert.deepEqual(unknown.body, fieldErrors({ 'custom_field.nope': ['The selected nope is invalid.'] }));
      // On add, an empty custom value is simply not stored.
      const added = await s.t.a.post('/contacts/add', { ...base(), 'custom_field[motto]': '' });
      assert.equal(added.status, 200, added.text);
      assert.equal((await details(added.body.id)).custom_field, null);
    });

    it('lets a contact keep its own email, in another letter case too', async () => {
      const id = await make.contact(s.t.a, { contact_type_id: s.typeId, email: 'own@example.com' });
      const r = await s.t.a.post('/contacts/update', { contact_id: id, contact_type_id: s.typeId, email: 'OWN@example.com', country: 101 });
      assert.equal(r.status, 200, r.text);
      assert.equal((await details(id)).email, 'OWN@example.com');
    });

    it("rejects another contact's email in the same type, also when moving to another type", async () => {
      await make.contact(s.t.a, { contact_type_id: s.typeId, email: 'taken@example.com' });
      const other = await make.contactType(s.t.a, 'Other');
      const id = await make.contact(s.t.a, { contact_type_id: other, email: 'mover@example.com' });
      const same = await s.t.a.post('/contacts/update', {
        contact_id: id,
        contact_type_id: other,
        email: 'Taken@example.com',
        country: 101,
      });
      assert.equal(same.status, 200, 'a different type does not clash');
      const move = await s.t.a.post('/contacts/update', {
        contact_id: id,
        contact_type_id: s.typeId,
        email: 'taken@example.com',
        country: 101,
      });
      assert.equal(move.status, 422);
      assert.deepEqual(move.body, fieldErrors({ email: ['The email has already been taken.'] }));
    });

    it('applies the add rules', async () => {
      const id = await make.contact(s.t.a, { contact_type_id: s.typeId });
      const r = await s.t.a.post('/contacts/update', { contact_id: id });
      assert.equal(r.status, 422);
      assert.deepEqual(r.body, MISSING_CONTACT_FIELDS);
      const missing = await s.t.a.post('/contacts/update', base());
      assert.deepEqual(missing.body, fieldErrors({ contact_id: ['The contact id field is required.'] }));
      const typed = await s.t.a.post('/contacts/update', base({ contact_id: id, custom_field: { shoe_size: 'x' } }));
      assert.deepEqual(typed.body, fieldErrors({ 'custom_field.shoe_size': ['The shoe size must be a number.'] }));
    });

    it("answers an unknown or another account's contact with 404 and changes nothing", async () => {
      const bType = await make.contactType(s.t.b);
      const bId = await make.contact(s.t.b, { contact_type_id: bType, first_name: 'Bee' });
      for (const contact_id of [bId, 999999, 0, 99999999999]) {
        const r = await s.t.a.post('/contacts/update', base({ contact_id, first_name: 'Hijack' }));
        assert.equal(r.status, 404, String(contact_id));
        assert.deepEqual(r.body, RNF);
      }
      const asB = await s.t.b.post('/contacts/update', {
        contact_id: bId,
        contact_type_id: s.typeId,
        email: 'x@example.com',
        country: 101,
      });
      assert.deepEqual(asB.body, fieldErrors({ contact_type_id: ['The selected contact type id is invalid.'] }));
      const c = (await s.t.b.get('/contacts/details', { contact_id: bId })).body.message.contact;
      assert.equal(c.first_name, 'Bee');
      assert.equal(c.contact_type_id, bType);
    });
  });

  describe('delete', () => {
    it('deletes one contact; a second delete is Record Not Found', async () => {
      const id = await make.contact(s.t.a, { contact_type_id: s.typeId });
      const r = await s.t.a.delete('/contacts/delete', { contact_id: id });
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, { status: 'success', message: 'Deleted Successfully' });
      assert.equal((await s.t.a.get('/contacts/details', { contact_id: id })).status, 404);
      assert.deepEqual((await s.t.a.delete('/contacts/delete', { contact_id: id })).body, RNF);
      const row = await s.t.database.db.selectFrom('contacts').select('deleted_at').where('id', '=', id).executeTakeFirstOrThrow();
      assert.match(row.deleted_at!, TS);
    });

    it("answers unknown, malformed, missing and another account's ids with 404, leaving them alone", async () => {
      const bId = await make.contact(s.t.b);
      for (const query of [{ contact_id: bId }, { contact_id: 999999 }, { contact_id: 'x' }, {}]) {
        const r = await s.t.a.delete('/contacts/delete', query);
        assert.equal(r.status, 404, JSON.stringify(query));
        assert.deepEqual(r.body, RNF);
      }
      assert.equal((await s.t.b.get('/contacts/details', { contact_id: bId })).status, 200);
    });
  });

  describe('bulk delete', () => {
    it("deletes the account's contacts among the ids and leaves unknown and foreign ones alone", async () => {
      const mine = [await make.contact(s.t.a, { contact_type_id: s.typeId }), await make.contact(s.t.a, { contact_type_id: s.typeId })];
      const bId = await make.contact(s.t.b);
      const r = await s.t.a.post('/contacts/bulk-delete', { strIds: [...mine, bId, 999999, mine[0]] });
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, { status: 'success', message: 'Deleted Successfully' });
      for (const id of mine) assert.equal((await s.t.a.get('/contacts/details', { contact_id: id })).status, 404);
      assert.equal((await s.t.b.get('/contacts/details', { contact_id: bId })).status, 200);
    });

    it("answers Record Not Found when none of the ids is the account's", async () => {
      const bId = await make.contact(s.t.b);
      const r = await s.t.a.post('/contacts/bulk-delete', { strIds: [bId, 999999] });
      assert.equal(r.status, 404);
      assert.deepEqual(r.body, RNF);
      assert.equal((await s.t.b.get('/contacts/details', { contact_id: bId })).status, 200);
    });

    it('answers a missing or malformed strIds with 422', async () => {
      const missing = await s.t.a.post('/contacts/bulk-delete', {});
      assert.equal(missing.status, 422);
      assert.deepEqual(missing.body, fieldErrors({ strIds: ['The str ids field is required.'] }));
      const bad = await s.t.a.post('/contacts/bulk-delete', { strIds: ['abc'] });
      assert.equal(bad.status, 422);
      assert.deepEqual(bad.body, fieldErrors({ 'strIds.0': ['The str ids.0 must be an integer.'] }));
      const blank = await s.t.a.post('/contacts/bulk-delete', { strIds: [''] });
      assert.deepEqual(blank.body, fieldErrors({ strIds: ['The str ids field is required.'] }));
    });
  });
});
