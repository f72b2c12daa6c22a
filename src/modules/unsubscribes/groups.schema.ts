import { Type } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { UnsubscribeGroupTable } from '../../db/types.js';
import { ListMessage, PagingQuery, QueryIds, Success, Text, Timestamp } from '../../http/schemas.js';

export type UnsubscribeGroupRow = Selectable<UnsubscribeGroupTable>;

/**
 * Body of save and update. `is_display` is only required here: Laravel's `boolean` rule (true,
 * false, 0, 1, "0", "1") cannot be expressed with AJV's coercion, so the service checks it.
 */
export const GroupBody = Type.Object({
  group_name: Text(255),
  description: Text(65_535),
  is_display: Type.Unknown({ description: 'Whether the preferences page offers the group: 1/0, true/false or "1"/"0".' }),
});
export interface GroupInput {
  group_name: string;
  description: string;
  is_display: unknown;
}

export const GroupIdQuery = QueryIds('id');
export const ListGroupsQuery = PagingQuery;

/** Laravel's `boolean` rule as 0/1, or null when the value is not one of its accepted forms. */
export function toFlag(value: unknown): 0 | 1 | null {
  if (value === true || value === 1 || value === '1') return 1;
  if (value === false || value === 0 || value === '0') return 0;
  return null;
}

const groupProperties = {
  id: Type.Integer(),
  user_id: Type.Integer(),
  rand_id: Type.String({ description: 'Random numeric text, unique across accounts.' }),
  group_name: Type.String(),
  description: Type.String(),
  is_display: Type.Integer({ minimum: 0, maximum: 1, description: '1 when the unsubscribe preferences page offers the group.' }),
  created_at: Timestamp,
  updated_at: Timestamp,
};

/** What `toGroup` returns (details). */
export const UnsubscribeGroupShape = Type.Object(groupProperties, {
  description: 'A topic recipients can unsubscribe from on its own, keeping other mail of the account.',
});

/** The list's groups: each with how many recipients unsubscribed from it. */
export const UnsubscribeGroupList = Success(
  ListMessage(
    'unsubscribesGroups',
    Type.Object({ ...groupProperties, unsubscribe_clients_count: Type.Integer({ minimum: 0, description: 'Recipients of the group.' }) }),
  ),
  { description: "The account's unsubscribe groups, newest first." },
);

/** Details: `{unsubscribesGroup}`. */
export const UnsubscribeGroupDetails = Success(Type.Object({ unsubscribesGroup: UnsubscribeGroupShape }));

/** The API shape of a group (`unsubscribe_clients_count` is added by the list only). */
export function toGroup(row: UnsubscribeGroupRow) {
  return {
    id: row.id,
    user_id: row.user_id,
    rand_id: row.rand_id,
    group_name: row.group_name,
    description: row.description,
    is_display: row.is_display,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
export type UnsubscribeGroup = ReturnType<typeof toGroup>;
