import { Type, type Static } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { SegmentTable } from '../../db/types.js';
import { Email, Enum, Id, ListMessage, Nullable, Paging, QueryIds, Success, Text, Timestamp } from '../../http/schemas.js';
import { OPERATORS } from './segments.conditions.js';
import { countryById } from '../../reference/geo.js';

export type SegmentRow = Selectable<SegmentTable>;

/**
 * Create/update parameters. A segment's conditions are three parallel arrays: condition i compares
 * field `select_field[i]` with operator `select_operator[i]` against the entries of `value` it takes
 * (none, one, or two for `between`), in order. The service checks them against the account's fields.
 */
const conditionFields = {
  contact_type_id: Id,
  select_field: Type.Optional(
    Type.Array(Text(64), {
      maxItems: 50,
      description:
        'Per condition: a reserved field, `created_at`, a custom field of the account, `engagement` (what any message of the ' +
        "account to the contact's address received, and whether a person opened or clicked it, within a number of days) or " +
        '`single_send` (the same for one single send).',
    }),
  ),
  select_operator: Type.Optional(Type.Array(Text(32), { maxItems: 50, description: `Per condition, one of: ${OPERATORS.join(', ')}.` })),
  value: Type.Optional(
    Type.Array(Text(), {
      maxItems: 100,
      description:
        "The conditions' values in order: none for `is empty` and `is not empty`, two for `between`, else one (for `engagement` " +
        'a number of days, 1–3650; for `single_send` the `utr` of a single send of the account).',
    }),
  ),
  query_type: Type.Optional(Enum(['and', 'or'] as const)),
};
const segmentFields = { segment_name: Text(), ...conditionFields };

export const CreateSegmentBody = Type.Object(segmentFields);
export const UpdateSegmentBody = Type.Object({ segment_id: Id, ...segmentFields });
export type SegmentInput = Static<typeof CreateSegmentBody>;

/** The count's parameters: a definition as create takes it, without the name. */
export const CountSegmentBody = Type.Object(conditionFields);
export type ConditionsInput = Static<typeof CountSegmentBody>;

/** How many contacts a definition would match now. */
export const SegmentCount = Success(
  Type.Object({
    count: Type.Integer({
      minimum: 0,
      description: 'The live contacts of the contact type that match the conditions: the members a segment saved with them starts with.',
    }),
  }),
  { description: 'The number of matching contacts.' },
);

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

const segmentProperties = {
  id: Type.Integer(),
  user_id: Type.Integer(),
  contact_type_id: Type.Integer(),
  segment_name: Type.String(),
  select_field: Type.Array(Type.String(), { description: 'One field per condition.' }),
  select_operator: Type.Array(Type.String(), { description: 'One operator per condition.' }),
  value: Type.Array(Type.String(), { description: "The conditions' values in order (two for `between`, none for `is empty`)." }),
  query_type: Nullable(Type.String({ description: '`and`: a member matches every condition; `or`: any of them.' })),
  deleted_at: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
};

/** The list's segments, each with its member count. */
export const SegmentList = Success(
  ListMessage(
    'segments',
    Type.Object(
      {
        ...segmentProperties,
        segment_emails_count: Type.Integer({ minimum: 0, description: 'Members: matched contacts and hand-added recipients.' }),
      },
      { description: 'The contacts of one contact type that match its conditions, plus recipients added by hand.' },
    ),
  ),
  { description: "The account's segments, newest first." },
);

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

/** What `toSegmentRecipient` returns. */
export const SegmentRecipientShape = Type.Object(
  {
    id: Type.Integer(),
    user_id: Type.Integer(),
    segment_id: Type.Integer(),
    contact_id: Nullable(Type.Integer({ description: 'The matched contact; null for a recipient added by hand.' })),
    first_name: Type.String(),
    last_name: Type.String(),
    email: Type.String(),
    country: Nullable(Type.String({ description: "The country's name." })),
    state: Nullable(Type.String()),
    city: Nullable(Type.String()),
    address_line1: Nullable(Type.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
    fullname: Type.String({ description: 'First and last name.' }),
  },
  { description: 'A member of a segment: a matching contact (its current fields) or a recipient added by hand.' },
);

export const SegmentRecipientList = Success(ListMessage('contactEmails', SegmentRecipientShape), {
  description: "The segment's members, newest first.",
});

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
