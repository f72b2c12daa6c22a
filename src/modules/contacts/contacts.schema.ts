import { Type, type Static } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { ContactTable } from '../../db/types.js';
import { Email, Int, Nullable, Paging, PagingQuery, QueryIds, Success, Text } from '../../http/schemas.js';
import { ContactTypeShape } from '../contact-types/contact-types.schema.js';
import { countryById } from '../../reference/geo.js';
import { toCustomFieldObject } from './contacts.values.js';

export type ContactRow = Selectable<ContactTable>;

/** Every parameter of add: the standard fields, the six reserved extras, and `custom_field[<name>]`. */
export const contactFields = {
  // No range here: an out-of-range id or country is "The selected … is invalid.", decided in the service.
  contact_type_id: Int({ description: 'A live contact type of the account.' }),
  first_name: Type.Optional(Text()),
  last_name: Type.Optional(Text()),
  email: { ...Email, description: 'Unique in the contact type, in any letter case.' },
  alt_email: Type.Optional(Email),
  country: Int({ description: 'A country id of `/get/country-state-city` (India is 101).' }),
  state: Type.Optional(Text()),
  city: Type.Optional(Text()),
  address_line1: Type.Optional(Text()),
  address_line2: Type.Optional(Text()),
  state_province_region: Type.Optional(Text()),
  postal_code: Type.Optional(Text(32)),
  father_name: Type.Optional(Text()),
  designation: Type.Optional(Text()),
  company_name: Type.Optional(Text()),
  // Checked against their reserved types in the service, with the same messages as custom fields.
  age: Type.Optional({ ...Text(32), description: 'A number.' }),
  birth_date: Type.Optional({ ...Text(32), description: '`YYYY-MM-DDTHH:MM`, seconds optional.' }),
  join_date: Type.Optional({ ...Text(32), description: '`YYYY-MM-DDTHH:MM`, seconds optional.' }),
  // A member sent empty arrives as null (normalizeInput): on update it clears that value.
  custom_field: Type.Optional(
    Type.Record(Type.String({ maxLength: 64 }), Type.Union([Type.String({ maxLength: 2000 }), Type.Null()]), {
      description: 'Custom values as `custom_field[<name>]` form fields (an object in JSON). On update, a value sent empty clears it.',
    }),
  ),
};

export const AddContactBody = Type.Object(contactFields);
// No range either: an unknown or out-of-range contact id is `Record Not Found`.
export const UpdateContactBody = Type.Object({ contact_id: Int(), ...contactFields });
export type ContactInput = Static<typeof AddContactBody>;
export const ContactIdQuery = QueryIds('contact_id');

const NullableText = Nullable(Type.String());

/** A custom value in a response: the field's label and its value as text. */
const CustomValue = Type.Object({
  field_name: Type.String({ description: 'The label: `shoe_size` → `Shoe Size`.' }),
  field_value: NullableText,
});

/** What `toContact` returns: the response schema of details (a compiled serializer, not a check). */
export const ContactShape = Type.Object({
  id: Type.Integer(),
  user_id: Type.Integer(),
  contact_type_id: Type.Integer({ description: 'A live contact type of the account.' }),
  first_name: NullableText,
  last_name: NullableText,
  email: Type.String(),
  alt_email: NullableText,
  country: NullableText,
  state: NullableText,
  city: NullableText,
  address_line1: NullableText,
  address_line2: NullableText,
  state_province_region: NullableText,
  postal_code: NullableText,
  custom_field: Type.Union([Type.Null(), Type.Record(Type.String(), CustomValue)], {
    description: 'Custom values and reserved extras by field name; null when the contact has none.',
  }),
  deleted_at: NullableText,
  created_at: Type.String(),
  updated_at: Type.String(),
  fullname: Type.String({ description: 'First and last name, trimmed.' }),
});

/** A contact in the list: `country` is the country's name, and its contact type comes along. */
export const ContactListItem = Type.Object({ ...ContactShape.properties, contact_type: Nullable(ContactTypeShape) });
export const ListContactsQuery = PagingQuery;

/** `GET /contacts/search`: an address prefix and a page. */
export const SearchContactsQuery = Type.Object({
  q: Type.Optional(
    Type.String({ maxLength: 254, description: 'The start of the email address, any case; empty or absent: every contact, newest first.' }),
  ),
  ...Paging,
});

/** The answer of `GET /contacts/search`: one page of list items and whether another follows. */
export const SearchContactsAnswer = Success(
  Type.Object({
    contacts: Type.Array(ContactListItem),
    meta: Type.Object({
      page: Type.Integer({ minimum: 1 }),
      per_page: Type.Integer({ minimum: 1 }),
      has_more: Type.Boolean({ description: 'Whether a next page exists.' }),
    }),
  }),
  'One page of the matching contacts, in address order (newest first without `q`).',
);

/** The API shape of a contact; `country` is the id as text (details) or the country name (list). */
export function toContact(row: ContactRow, country: 'id' | 'name') {
  return {
    id: row.id,
    user_id: row.user_id,
    contact_type_id: row.contact_type_id,
    first_name: row.first_name,
    last_name: row.last_name,
    email: row.email,
    alt_email: row.alt_email,
    country: country === 'id' ? row.country : (countryById(Number(row.country))?.name ?? row.country),
    state: row.state,
    city: row.city,
    address_line1: row.address_line1,
    address_line2: row.address_line2,
    state_province_region: row.state_province_region,
    postal_code: row.postal_code,
    custom_field: toCustomFieldObject(row.custom_field),
    deleted_at: row.deleted_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
    fullname: `${row.first_name} ${row.last_name}`.trim(),
  };
}
