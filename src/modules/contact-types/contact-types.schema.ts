import { Type } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { ContactTypeTable } from '../../db/types.js';
import { Id, Nullable, PagingQuery, QueryIds, Text } from '../../http/schemas.js';

export type ContactTypeRow = Selectable<ContactTypeTable>;

export const AddContactTypeBody = Type.Object({
  name: Type.String({ minLength: 2, maxLength: 255, description: 'Unique in the account, in any letter case.' }),
});
export const UpdateContactTypeBody = Type.Object({ id: Id, name: Type.String({ minLength: 2, maxLength: 255 }) });
export const ViewContactTypeQuery = Type.Object({ contact_type_id: Type.Optional(Text(64)) });
export const DeleteContactTypeQuery = QueryIds('contact_type_id');
export const ListContactTypesQuery = PagingQuery;

/** A contact type as the API returns it (the response schema of `toContactType`). */
export const ContactTypeShape = Type.Object({
  id: Type.Integer(),
  user_id: Type.Integer(),
  name: Type.String(),
  deleted_at: Nullable(Type.String()),
  created_at: Type.String(),
  updated_at: Type.String(),
});

/** A contact type in the list: with its live contacts counted. */
export const ContactTypeListItem = Type.Object({ ...ContactTypeShape.properties, contacts_count: Type.Integer() });

/** The API shape of a contact type (contacts_count only in the list). */
export function toContactType(row: ContactTypeRow) {
  return {
    id: row.id,
    user_id: row.user_id,
    name: row.name,
    deleted_at: row.deleted_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
export type ContactType = ReturnType<typeof toContactType>;
