import { Type } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { FieldTable } from '../../db/types.js';
import { Enum, PagingQuery, QueryIds } from '../../http/schemas.js';
import { FIELD_TYPES } from './fields.reserved.js';

export type FieldRow = Selectable<FieldTable>;

export const SaveCustomFieldBody = Type.Object({
  field_name: Type.String({ maxLength: 64, pattern: '^[A-Za-z0-9_]+$' }),
  field_type: Enum(FIELD_TYPES),
});
export const DeleteCustomFieldQuery = QueryIds('id');
export const ListFieldsQuery = PagingQuery;

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
