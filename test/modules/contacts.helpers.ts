import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { fieldErrors, make, setup, type TestContext } from '../helpers.js';

export const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
export const RNF = { status: 'failed', errors: 'Record Not Found' };
/** The 422 body of a contact add or update without its three required fields. */
export const MISSING_CONTACT_FIELDS = fieldErrors({
  contact_type_id: ['The contact type id field is required.'],
  email: ['The email field is required.'],
  country: ['The country field is required.'],
});
export const CONTACT_KEYS = [
  'id',
  'user_id',
  'contact_type_id',
  'first_name',
  'last_name',
  'email',
  'alt_email',
  'country',
  'state',
  'city',
  'address_line1',
  'address_line2',
  'state_province_region',
  'postal_code',
  'custom_field',
  'deleted_at',
  'created_at',
  'updated_at',
  'fullname',
];

/** The contacts suites' app: two accounts, a contact type of A's, three custom fields of A's and one of B's. */
export async function setupContacts(): Promise<{ t: TestContext; typeId: number }> {
  const t = await setup();
  const typeId = await make.contactType(t.a, 'Customers');
  for (const [field_name, field_type] of [
    ['shoe_size', 'number'],
    ['Last_Visit', 'datetime-local'],
    ['motto', 'text'],
  ]) {
    const r = await t.a.post('/custom-fields/save', { field_name, field_type });
    assert.equal(r.status, 200, r.text);
  }
  assert.equal((await t.b.post('/custom-fields/save', { field_name: 'b_only', field_type: 'text' })).status, 200);
  return { t, typeId };
}

/**
 * Registers the suite's app (`setupContacts`, closed after the suite) and returns it with two
 * helpers: `details` (account A's contact as details shows it) and `base` (the fields of a valid
 * new contact of the type, a fresh email each time, with `extra` on top).
 */
export function contactsSuite() {
  let t: TestContext;
  let typeId = 0;
  before(async () => {
    ({ t, typeId } = await setupContacts());
  });
  after(() => t.close());
  return {
    get t() {
      return t;
    },
    get typeId() {
      return typeId;
    },
    details: async (id: number) => (await t.a.get('/contacts/details', { contact_id: id })).body.message.contact,
    base: (extra: Record<string, unknown> = {}) => ({
      contact_type_id: typeId,
      email: `c.${Math.random().toString(16).slice(2)}@example.com`,
      country: 101,
      ...extra,
    }),
  };
}
