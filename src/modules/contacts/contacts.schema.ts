import { Type, type Static } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { ContactTable } from '../../db/types.js';
import { Email, PagingQuery, QueryIds, Text } from '../../http/schemas.js';
import { countryById } from '../geo/geo.data.js';
import { toCustomFieldObject } from './contacts.values.js';

export type ContactRow = Selectable<ContactTable>;

/** Every parameter of add (contract §6: the six reserved extras and `custom_field[<name>]` too). */
export const contactFields = {
  // No range here: an out-of-range id or country is "The selected … is invalid.", decided in the service.
  contact_type_id: Type.Integer(),
  first_name: Type.Optional(Text()),
  last_name: Type.Optional(Text()),
  email: Email,
  alt_email: Type.Optional(Email),
  country: Type.Integer(),
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
  age: Type.Optional(Text(32)),
  birth_date: Type.Optional(Text(32)),
  join_date: Type.Optional(Text(32)),
  // A member sent empty arrives as null (normalizeInput): on update it clears that value.
  custom_field: Type.Optional(Type.Record(Type.String({ maxLength: 64 }), Type.Union([Type.String({ maxLength: 2000 }), Type.Null()]))),
};

export const AddContactBody = Type.Object(contactFields);
export const UpdateContactBody = Type.Object({ contact_id: Type.Integer(), ...contactFields });
export type ContactInput = Static<typeof AddContactBody>;
export const ContactIdQuery = QueryIds('contact_id');

const NullableText = Type.Union([Type.String(), Type.Null()]);

/** What `toContact` returns: the response schema of details (a compiled serializer, not a check). */
export const ContactShape = Type.Object({
  id: Type.Integer(),
  user_id: Type.Integer(),
  contact_type_id: Type.Integer(),
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
  custom_field: Type.Union([Type.Null(), Type.Record(Type.String(), Type.Object({ field_name: Type.String(), field_value: NullableText }))]),
  deleted_at: NullableText,
  created_at: Type.String(),
  updated_at: Type.String(),
  fullname: Type.String(),
});
export const ListContactsQuery = PagingQuery;

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
