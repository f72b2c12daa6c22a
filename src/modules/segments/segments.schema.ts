import { Type, type Static } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { SegmentTable } from '../../db/types.js';
import { Email, Enum, Id, Paging, QueryIds, Text } from '../../http/schemas.js';
import { countryById } from '../geo/geo.data.js';

export type SegmentRow = Selectable<SegmentTable>;

/** Create/update parameters (contract §8); the condition arrays are checked by the service. */
const segmentFields = {
  segment_name: Text(),
  contact_type_id: Id,
  select_field: Type.Optional(Type.Array(Text(64), { maxItems: 50 })),
  select_operator: Type.Optional(Type.Array(Text(32), { maxItems: 50 })),
  value: Type.Optional(Type.Array(Text(), { maxItems: 100 })),
  query_type: Type.Optional(Enum(['and', 'or'] as const)),
};

export const CreateSegmentBody = Type.Object(segmentFields);
export const UpdateSegmentBody = Type.Object({ segment_id: Id, ...segmentFields });
export type SegmentInput = Static<typeof CreateSegmentBody>;

export const StoreRecipientBody = Type.Object({
  segment_id: Id,
  first_name: Text(),
  last_name: Text(),
  email: Email,
});
export type RecipientInput = Static<typeof StoreRecipientBody>;

export const SegmentIdQuery = QueryIds('segment_id');
export const RecipientListQuery = Type.Object({ segment_id: Type.Optional(Type.String({ maxLength: 64 })), ...Paging });
export const RecipientIdQuery = QueryIds('segment_recipient_id');
export const ListSegmentsQuery = Type.Object(Paging);

function jsonArray(text: string): string[] {
  try {
    const v = JSON.parse(text);
    return Array.isArray(v) ? v.map(String) : [];
  } catch {
    return [];
  }
}

/** The API shape of a segment (`segment_emails_count` only in the list). */
export function toSegment(row: SegmentRow) {
  return {
    id: row.id,
    user_id: row.user_id,
    contact_type_id: row.contact_type_id,
    segment_name: row.segment_name,
    select_field: jsonArray(row.select_field),
    select_operator: jsonArray(row.select_operator),
    value: jsonArray(row.value),
    query_type: row.query_type,
    deleted_at: row.deleted_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
export type Segment = ReturnType<typeof toSegment>;

/** A member as the recipient list reads it: a matched contact's fields, or the hand-added ones. */
export interface RecipientListRow {
  id: number;
  user_id: number;
  segment_id: number;
  contact_id: number | null;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  country: string | null;
  state: string | null;
  city: string | null;
  address_line1: string | null;
  created_at: string;
  updated_at: string;
}

/** The API shape of a segment recipient; `country` is the country's name, as in the contact list. */
export function toSegmentRecipient(row: RecipientListRow) {
  const first = row.first_name ?? '';
  const last = row.last_name ?? '';
  return {
    id: row.id,
    user_id: row.user_id,
    segment_id: row.segment_id,
    contact_id: row.contact_id,
    first_name: first,
    last_name: last,
    email: row.email ?? '',
    country: row.country === null ? null : (countryById(Number(row.country))?.name ?? row.country),
    state: row.state,
    city: row.city,
    address_line1: row.address_line1,
    created_at: row.created_at,
    updated_at: row.updated_at,
    fullname: `${first} ${last}`.trim(),
  };
}
