import type { Db } from '../../db/index.js';
import { queryListSource } from '../../db/list-source.js';
import { NotFound, RNF, type FieldErrors } from '../../http/errors.js';
import { messages, Rules } from '../../http/messages.js';
import { toId } from '../../http/schemas.js';
import { findContactType } from '../contact-types/contact-types.queries.js';
import { toContactType } from '../contact-types/contact-types.schema.js';
import { customFieldsByName } from '../fields/fields.queries.js';
import { countryById } from '../geo/geo.data.js';
import {
  contactTypesByIds,
  findContact,
  findContactIdByEmail,
  insertContact,
  selectContacts,
  softDeleteContacts,
  updateContactRow,
} from './contacts.queries.js';
import { toContact, type ContactInput, type ContactRow } from './contacts.schema.js';
import { EXTRA_NAMES, fieldTypeMessage, fitsFieldType, parseCustomValues, serializeCustomValues, type CustomValues } from './contacts.values.js';

/** The list source of the account's contacts: country names and the `contact_type` object. */
export function contactList(db: Db, userId: number) {
  return queryListSource(
    () => selectContacts(db, userId),
    'id',
    async (rows: ContactRow[]) => {
      const typeIds = [...new Set(rows.map((r) => r.contact_type_id))];
      const types = new Map((typeIds.length ? await contactTypesByIds(db, userId, typeIds) : []).map((t) => [t.id, toContactType(t)]));
      return rows.map((r) => ({ ...toContact(r, 'name'), contact_type: types.get(r.contact_type_id) ?? null }));
    },
  );
}

/** One contact, country as its id (details). */
export async function getContact(db: Db, userId: number, rawId: unknown) {
  const id = toId(rawId);
  const row = id ? await findContact(db, userId, id) : undefined;
  if (!row) throw new NotFound(RNF);
  return toContact(row, 'id');
}

/**
 * Checks the rules that need the database (contact type, country, custom fields, unique email)
 * on top of the schema's failures, reports all together, and returns the new custom values.
 */
async function checkContact(db: Db, userId: number, input: ContactInput, rules: Rules, current: CustomValues, exceptId?: number): Promise<CustomValues> {
  await rules.check('contact_type_id', input.contact_type_id, async (id) =>
    (await findContactType(db, userId, id)) ? null : messages.invalid('contact_type_id'),
  );
  await rules.check('country', input.country, (id) => (countryById(id) ? null : messages.invalid('country')));
  const values: CustomValues = { ...current };
  for (const name of EXTRA_NAMES) {
    const v = (input as Record<string, unknown>)[name];
    if (v !== undefined && !rules.failed(name)) values[name] = String(v);
  }
  const given = input.custom_field ?? {};
  if (Object.keys(given).length && !rules.failed('custom_field')) {
    const defs = await customFieldsByName(db, userId);
    for (const [name, value] of Object.entries(given)) {
      const key = `custom_field.${name}`;
      const def = defs.get(name);
      if (!def) rules.add(key, messages.invalid(key));
      else if (!fitsFieldType(def.field_type, value)) rules.add(key, fieldTypeMessage(def.field_type, name));
      else values[name] = value;
    }
  }
  if (!rules.failed('contact_type_id') && !rules.failed('email') && input.contact_type_id && input.email) {
    if (await findContactIdByEmail(db, userId, input.contact_type_id, input.email, exceptId)) rules.add('email', messages.unique('email'));
  }
  rules.done();
  return values;
}

function columnsOf(input: ContactInput, custom: CustomValues) {
  return {
    contact_type_id: input.contact_type_id,
    first_name: input.first_name ?? '',
    last_name: input.last_name ?? '',
    email: input.email,
    email_key: input.email.toLowerCase(),
    alt_email: input.alt_email ?? null,
    country: String(input.country),
    state: input.state ?? null,
    city: input.city ?? null,
    address_line1: input.address_line1 ?? null,
    address_line2: input.address_line2 ?? null,
    state_province_region: input.state_province_region ?? null,
    postal_code: input.postal_code ?? null,
    custom_field: serializeCustomValues(custom),
  };
}

/** Adds a contact; returns its id. */
export async function addContact(db: Db, userId: number, input: ContactInput, schemaFailures: FieldErrors): Promise<number> {
  const custom = await checkContact(db, userId, input, new Rules(schemaFailures), {});
  return insertContact(db, { user_id: userId, ...columnsOf(input, custom) });
}

/**
 * Replaces a contact's standard fields with the given ones (the spec's "all parameters of add");
 * custom values are merged, so a client that does not send them keeps them.
 */
export async function updateContact(db: Db, userId: number, input: ContactInput & { contact_id: number }, schemaFailures: FieldErrors): Promise<void> {
  const rules = new Rules(schemaFailures);
  const row = rules.failed('contact_id') ? undefined : await findContact(db, userId, input.contact_id);
  if (!row && !rules.failed('contact_id')) throw new NotFound(RNF);
  const custom = await checkContact(db, userId, input, rules, parseCustomValues(row?.custom_field ?? null), input.contact_id);
  await updateContactRow(db, userId, input.contact_id, columnsOf(input, custom));
}

export async function deleteContact(db: Db, userId: number, rawId: unknown): Promise<void> {
  const id = toId(rawId);
  if (!id || (await softDeleteContacts(db, userId, [id])) === 0) throw new NotFound(RNF);
}

/** Soft-deletes the account's contacts among `ids`; not found when none of them is. */
export async function bulkDeleteContacts(db: Db, userId: number, ids: number[]): Promise<number> {
  const n = await softDeleteContacts(db, userId, [...new Set(ids)]);
  if (n === 0) throw new NotFound(RNF);
  return n;
}
