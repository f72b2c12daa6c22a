import { Type } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { ContactTypeTable } from '../../db/types.js';
import { Id, PagingQuery, QueryIds, Text } from '../../http/schemas.js';

export type ContactTypeRow = Selectable<ContactTypeTable>;

export const AddContactTypeBody = Type.Object({ name: Type.String({ minLength: 2, maxLength: 255 }) });
export const UpdateContactTypeBody = Type.Object({ id: Id, name: Type.String({ minLength: 2, maxLength: 255 }) });
export const ViewContactTypeQuery = Type.Object({ contact_type_id: Type.Optional(Text(64)) });
export const DeleteContactTypeQuery = QueryIds('contact_type_id');
export const ListContactTypesQuery = PagingQuery;

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
