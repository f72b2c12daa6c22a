import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrors, make } from '../helpers.js';
import { TS, CONTACT_KEYS, contactsSuite, MISSING_CONTACT_FIELDS } from './contacts.helpers.js';

describe('contacts: add', () => {
  const s = contactsSuite();
  const { details, base } = s;

  describe('add', () => {
    it('adds a contact with every field and returns the text with its id', async () => {
      const r = await s.t.a.post('/contacts/add', {
        contact_type_id: s.typeId,
        first_name: 'Ada',
        last_name: 'Lovelace',
        email: 'ada@example.com',
        alt_email: 'ada.alt@example.com',
        country: 101,
        state: 'Maharashtra',
        city: 'Pune',
        address_line1: '1 Analytical St',
        address_line2: 'Floor 2',
        state_province_region: 'West',
        postal_code: '411001',
        father_name: 'George',
        designation: 'Engineer',
        company_name: 'Engines Ltd',
        age: '36',
        birth_date: '1815-12-10T08:30',
        join_date: '2024-01-02T03:04:05',
        custom_field: { shoe_size: '38.5', Last_Visit: '2024-05-06T07:08', motto: 'Poetical science' },
      });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(Object.keys(r.body), ['status', 'message', 'id']);
      assert.equal(r.body.status, 'success');
      assert.equal(r.body.message, 'Contact Added Successfully');
      const c = await details(r.body.id);
      assert.deepEqual(Object.keys(c), CONTACT_KEYS);
      assert.deepEqual(
        { ...c, created_at: undefined, updated_at: undefined },
        {
          id: r.body.id,
          user_id: s.t.a.keys!.user_id,
          contact_type_id: s.typeId,
          first_name: 'Ada',
          last_name: 'Lovelace',
          email: 'ada@example.com',
          alt_email: 'ada.alt@example.com',
          country: '101',
          state: 'Maharashtra',
          city: 'Pune',
          address_line1: '1 Analytical St',
          address_line2: 'Floor 2',
          state_province_region: 'West',
          postal_code: '411001',
          custom_field: {
            shoe_size: { field_name: 'Shoe Size', field_value: '38.5' },
            Last_Visit: { field_name: 'Last Visit', field_value: '2024-05-06T07:08' },
            motto: { field_name: 'Motto', field_value: 'Poetical science' },
            father_name: { field_name: 'Father Name', field_value: 'George' },
            designation: { field_name: 'Designation', field_value: 'Engineer' },
            company_name: { field_name: 'Company Name', field_value: 'Engines Ltd' },
            age: { field_name: 'Age', field_value: '36' },
            birth_date: { field_name: 'Birth Date', field_value: '1815-12-10T08:30' },
            join_date: { field_name: 'Join Date', field_value: '2024-01-02T03:04:05' },
          },
          deleted_at: null,
          created_at: undefined,
          updated_at: undefined,
          fullname: 'Ada Lovelace',
        },
      );
      assert.match(c.created_at, TS);
      assert.match(c.updated_at, TS);
    });

    it('stores a minimal contact with empty names, null optional fields and a null custom_field', async () => {
      const r = await s.t.a.post('/contacts/add', base());
      assert.equal(r.status, 200, r.text);
      const c = await details(r.body.id);
      assert.equal(c.first_name, '');
      assert.equal(c.last_name, '');
      assert.equal(c.fullname, '');
      assert.equal(c.alt_email, null);
      assert.equal(c.state, null);
      assert.equal(c.postal_code, null);
      assert.equal(c.custom_field, null);
    });

    it('reports missing email, country and contact_type_id together', async () => {
      const r = await s.t.a.post('/contacts/add', { first_name: 'Only' });
      assert.equal(r.status, 422);
      assert.deepEqual(r.body, MISSING_CONTACT_FIELDS);
    });

    it('rejects a malformed email, and one carrying a header line', async () => {
      for (const email of ['not-an-email', 'a@b@c.com', 'x@example.com\r\nBcc: y@example.com']) {
        const r = await s.t.a.post('/contacts/add', base({ email }));
        assert.equal(r.status, 422, email);
        assert.deepEqual(r.body, fieldErrors({ email: ['The email must be a valid email address.'] }));
      }
    });

    it('rejects a duplicate email in the same contact type, case-insensitively', async () => {
      await make.contact(s.t.a, { contact_type_id: s.typeId, email: 'dup@example.com' });
      const r = await s.t.a.post('/contacts/add', base({ email: 'DUP@Example.com' }));
      assert.equal(r.status, 422);
      assert.deepEqual(r.body, fieldErrors({ email: ['The email has already been taken.'] }));
    });

    it('accepts the same email in another contact type and in another account', async () => {
      await make.contact(s.t.a, { contact_type_id: s.typeId, email: 'shared@example.com' });
      const otherType = await make.contactType(s.t.a, 'Leads');
      assert.equal((await s.t.a.post('/contacts/add', base({ contact_type_id: otherType, email: 'shared@example.com' }))).status, 200);
      const bType = await make.contactType(s.t.b, 'Customers');
      assert.equal((await s.t.b.post('/contacts/add', { contact_type_id: bType, email: 'shared@example.com', country: 101 })).status, 200);
    });

    it('accepts an email again after its contact was deleted', async () => {
      const id = await make.contact(s.t.a, { contact_type_id: s.typeId, email: 'again@example.com' });
      await s.t.a.delete('/contacts/delete', { contact_id: id });
      assert.equal((await s.t.a.post('/contacts/add', base({ email: 'again@example.com' }))).status, 200);
    });

    it("rejects another account's, a deleted and an unknown contact type", async () => {
      const foreign = await make.contactType(s.t.b, 'B type');
      const deleted = await make.contactType(s.t.a, 'Gone type');
      await s.t.a.delete('/contacts-type/delete', { contact_type_id: deleted });
      for (const contact_type_id of [foreign, deleted, 999999, 0, -3, 99999999999]) {
        const r = await s.t.a.post('/contacts/add', base({ contact_type_id }));
        assert.equal(r.status, 422, String(contact_type_id));
        assert.deepEqual(r.body, fieldErrors({ contact_type_id: ['The selected contact type id is invalid.'] }));
      }
      const text = await s.t.a.post('/contacts/add', base({ contact_type_id: 'abc' }));
      assert.deepEqual(text.body, fieldErrors({ contact_type_id: ['The contact type id must be an integer.'] }));
    });

    it('rejects a country that is not a country id', async () => {
      for (const country of [999999, 0, 99999999999]) {
        const r = await s.t.a.post('/contacts/add', base({ country }));
        assert.equal(r.status, 422, String(country));
        assert.deepEqual(r.body, fieldErrors({ country: ['The selected country is invalid.'] }));
      }
      const name = await s.t.a.post('/contacts/add', base({ country: 'India' }));
      assert.deepEqual(name.body, fieldErrors({ country: ['The country must be an integer.'] }));
    });

    it('checks custom field values against their type', async () => {
      const r = await s.t.a.post('/contacts/add', base({ custom_field: { shoe_size: 'big', Last_Visit: 'yesterday' } }));
      assert.equal(r.status, 422);
      assert.deepEqual(
        r.body,
        fieldErrors({
          'custom_field.shoe_size': ['The shoe size must be a number.'],
          'custom_field.Last_Visit': ['The last visit is not a valid date.'],
        }),
      );
      for (const bad of ['2024-13-01T10:00', '2024-01-01', '2024-01-01 10:00', '2024-01-01T25:00']) {
        const d = await s.t.a.post('/contacts/add', base({ custom_field: { Last_Visit: bad } }));
        assert.equal(d.status, 422, bad);
      }
      for (const good of ['2024-01-01T10:00', '2024-01-01T10:00:59']) {
        assert.equal((await s.t.a.post('/contacts/add', base({ custom_field: { Last_Visit: good } }))).status, 200, good);
      }
      for (const good of ['-3', '0', '12.25']) {
        assert.equal((await s.t.a.post('/contacts/add', base({ custom_field: { shoe_size: good } }))).status, 200, good);
      }
    });

    it('checks the reserved extras against their reserved types', async () => {
      const r = await s.t.a.post('/contacts/add', base({ age: 'old', birth_date: '10/12/1815', join_date: '2024-02-30T10:00' }));
      assert.equal(r.status, 422);
      assert.deepEqual(
        r.body,
        fieldErrors({
          age: ['The age must be a number.'],
          birth_date: ['The birth date is not a valid date.'],
          join_date: ['The join date is not a valid date.'],
        }),
      );
    });

    it('accepts the reserved extras inside custom_field too, the plain field winning', async () => {
      const r = await s.t.a.post('/contacts/add', base({ custom_field: { age: '40', designation: 'CTO' }, designation: 'CEO' }));
      assert.equal(r.status, 200, r.text);
      const c = await details(r.body.id);
      assert.equal(c.custom_field.age.field_value, '40');
      assert.equal(c.custom_field.designation.field_value, 'CEO');
      const bad = await s.t.a.post('/contacts/add', base({ custom_field: { age: 'x' } }));
      assert.deepEqual(bad.body, fieldErrors({ 'custom_field.age': ['The age must be a number.'] }));
    });

    it('matches custom field names case-insensitively and stores them under the defined name', async () => {
      const r = await s.t.a.post('/contacts/add', base({ custom_field: { SHOE_SIZE: '41', last_visit: '2024-01-01T10:00' } }));
      assert.equal(r.status, 200, r.text);
      const c = await details(r.body.id);
      assert.deepEqual(Object.keys(c.custom_field).sort(), ['Last_Visit', 'shoe_size']);
    });

    it("rejects an unknown custom field name, and another account's field, as field errors", async () => {
      const r = await s.t.a.post('/contacts/add', base({ custom_field: { hat_size: '7', b_only: 'x', first_name: 'y' } }));
      assert.equal(r.status, 422);
      assert.deepEqual(
        r.body,
        fieldErrors({
          'custom_field.hat_size': ['The selected hat size is invalid.'],
          'custom_field.b_only': ['The selected b only is invalid.'],
          'custom_field.first_name': ['The selected first name is invalid.'],
        }),
      );
    });

    it('reports schema and database failures together', async () => {
      const r = await s.t.a.post('/contacts/add', {
        contact_type_id: 999999,
        email: 'bad',
        country: 999999,
        age: 'x',
        custom_field: { nope: '1' },
      });
      assert.deepEqual(
        r.body,
        fieldErrors({
          email: ['The email must be a valid email address.'],
          contact_type_id: ['The selected contact type id is invalid.'],
          country: ['The selected country is invalid.'],
          'custom_field.nope': ['The selected nope is invalid.'],
          age: ['The age must be a number.'],
        }),
      );
    });

    it('rejects over-long values with the max message, never a 500', async () => {
      const r = await s.t.a.post('/contacts/add', base({ first_name: 'x'.repeat(256), custom_field: { motto: 'y'.repeat(2001) } }));
      assert.equal(r.status, 422);
      assert.deepEqual(r.body.errors.first_name, ['The first name must not be greater than 255 characters.']);
      assert.ok(r.body.errors['custom_field.motto']);
    });
  });

  it('answers two simultaneous adds of one address with one success and one field error, never a 500', async () => {
    const form = { contact_type_id: s.typeId, email: 'race@example.com', country: 101 };
    const results = await Promise.all([1, 2, 3, 4].map(() => s.t.a.post('/contacts/add', form)));
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 422, 422, 422]);
    for (const r of results.filter((x) => x.status === 422)) {
      assert.deepEqual(r.body, fieldErrors({ email: ['The email has already been taken.'] }));
    }
  });
});
