import { Type } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { FieldTable } from '../../db/types.js';
import { Enum, Nullable, PagingQuery, QueryIds } from '../../http/schemas.js';
import { FIELD_TYPES } from '../../reference/fields.js';

export type FieldRow = Selectable<FieldTable>;

export const SaveCustomFieldBody = Type.Object({
  field_name: Type.String({
    maxLength: 64,
    pattern: '^[A-Za-z0-9_]+$',
    description: 'Letters, digits and `_`; not a reserved or placeholder name; unique in the account in any letter case.',
  }),
  field_type: Enum(FIELD_TYPES),
});
export const DeleteCustomFieldQuery = QueryIds('id');
export const ListFieldsQuery = PagingQuery;

/** A field definition as the API returns it (the response schema of `toField`). */
export const FieldShape = Type.Object({
  id: Type.Integer(),
  user_id: Nullable(Type.Integer({ description: 'Null for reserved fields.' })),
  field_name: Type.String(),
  field_type: Type.String({ description: '`text`, `number` or `datetime-local`.' }),
  is_reserved: Type.Integer({ description: '1 for reserved fields, 0 for custom ones.' }),
  created_at: Nullable(Type.String()),
  updated_at: Nullable(Type.String()),
});

/** The API shape of a field definition. */
export function toField(row: FieldRow) {
  return {
    id: row.id,
    user_id: row.user_id,
    field_name: row.field_name,
    field_type: row.field_type,
    is_reserved: row.is_reserved,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
