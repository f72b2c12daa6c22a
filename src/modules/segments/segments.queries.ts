import { sql, type SelectQueryBuilder } from 'kysely';
import type { DB } from '../../db/types.js';
import { isoMicros } from '../../util/time.js';
import type { RecipientListRow } from './segments.schema.js';
import { softDeleteOwned } from '../../db/soft-delete.js';
import type { Db } from '../../db/index.js';

/** The stored form of a segment's definition. */
export interface SegmentValues {
  contact_type_id: number;
  segment_name: string;
  select_field: string[];
  select_operator: string[];
  value: string[];
  query_type: string;
}

function columnsOf(v: SegmentValues) {
  return {
    contact_type_id: v.contact_type_id,
    segment_name: v.segment_name,
    select_field: JSON.stringify(v.select_field),
    select_operator: JSON.stringify(v.select_operator),
    value: JSON.stringify(v.value),
    query_type: v.query_type,
  };
}

/** The account's live segments, each with its member count (matched and hand-added). */
export function selectSegmentsWithCounts(db: Db, userId: number) {
  return db
    .selectFrom('segments as s')
    .selectAll('s')
    .select((eb) =>
      eb
        .selectFrom('segment_recipients as r')
        .select((e) => e.fn.countAll<number>().as('n'))
        .whereRef('r.segment_id', '=', 's.id')
        .as('segment_emails_count'),
    )
    .where('s.user_id', '=', userId)
    .where('s.deleted_at', 'is', null);
}

/** The account's custom fields by name, with their types: what segment conditions may name. */
export async function customFieldTypes(db: Db, userId: number): Promise<Map<string, { field_type: string }>> {
  const rows = await db.selectFrom('fields').select(['field_name', 'field_type']).where('user_id', '=', userId).execute();
  return new Map(rows.map((r) => [r.field_name, r]));
}

/** Whether the account has a live contact type with this id (a segment's type must be one). */
export async function contactTypeExists(db: Db, userId: number, id: number): Promise<boolean> {
  const row = await db
    .selectFrom('contact_types')
    .select('id')
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}

/** Of the given `utrs`, those of live single sends of the account. */
export async function sendUtrsOf(db: Db, userId: number, utrs: string[]): Promise<Set<string>> {
  const rows = await db
    .selectFrom('single_sends')
    .select('utr')
    .where('user_id', '=', userId)
    .where('utr', 'in', [...new Set(utrs)])
    .where('deleted_at', 'is', null)
    .execute();
  return new Set(rows.map((r) => r.utr));
}

/** One live segment of the account. */
export function findSegment(db: Db, userId: number, id: number) {
  return db
    .selectFrom('segments')
    .selectAll()
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

/** The account's live segments (all, or those of one contact type). */
export function segmentsOf(db: Db, userId: number, contactTypeId?: number) {
  return db
    .selectFrom('segments')
    .selectAll()
    .where('user_id', '=', userId)
    .where('deleted_at', 'is', null)
    .$if(contactTypeId !== undefined, (q) => q.where('contact_type_id', '=', contactTypeId!))
    .orderBy('id')
    .execute();
}

/** The account's live segments that `contactIds` belong to now or may belong to (same contact type). */
export function segmentsTouching(db: Db, userId: number, contactIds: number[]) {
  return db
    .selectFrom('segments as s')
    .selectAll('s')
    .where('s.user_id', '=', userId)
    .where('s.deleted_at', 'is', null)
    .where((eb) =>
      eb.or([
        eb(
          's.contact_type_id',
          'in',
          eb.selectFrom('contacts').select('contact_type_id').where('user_id', '=', userId).where('id', 'in', contactIds),
        ),
        eb('s.id', 'in', eb.selectFrom('segment_recipients').select('segment_id').where('contact_id', 'in', contactIds)),
      ]),
    )
    .orderBy('s.id')
    .execute();
}

export async function insertSegment(db: Db, userId: number, values: SegmentValues, now: Date): Promise<number> {
  const at = isoMicros(now);
  const row = await db
    .insertInto('segments')
    .values({ user_id: userId, ...columnsOf(values), created_at: at, updated_at: at })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Saves a new definition; the old exclusions end with it (the segment was edited). */
export async function updateSegmentRow(db: Db, userId: number, id: number, values: SegmentValues, now: Date): Promise<void> {
  await db
    .updateTable('segments')
    .set({ ...columnsOf(values), updated_at: isoMicros(now) })
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .execute();
  await db.deleteFrom('segment_exclusions').where('segment_id', '=', id).execute();
}

/** Soft-deletes a segment and removes its members and exclusions. */
export async function softDeleteSegment(db: Db, userId: number, id: number, now: Date): Promise<void> {
  await softDeleteOwned(db, 'segments', userId, [id], now);
  await db.deleteFrom('segment_recipients').where('segment_id', '=', id).execute();
  await db.deleteFrom('segment_exclusions').where('segment_id', '=', id).execute();
}

/** A segment's members for the recipient list: matched contacts' own fields, or the hand-added ones. */
export function selectRecipients(db: Db, userId: number, segmentId: number) {
  return db
    .selectFrom('segment_recipients as r')
    .leftJoin('contacts as c', 'c.id', 'r.contact_id')
    .select([
      'r.id',
      'r.user_id',
      'r.segment_id',
      'r.contact_id',
      sql<string | null>`coalesce(c.first_name, r.first_name)`.as('first_name'),
      sql<string | null>`coalesce(c.last_name, r.last_name)`.as('last_name'),
      sql<string | null>`coalesce(c.email, r.email)`.as('email'),
      'c.country',
      'c.state',
      'c.city',
      'c.address_line1',
      'r.created_at',
      'r.updated_at',
    ])
    .where('r.user_id', '=', userId)
    .where('r.segment_id', '=', segmentId)
    .where((eb) => eb.or([eb('r.contact_id', 'is', null), eb('c.deleted_at', 'is', null)])) as unknown as SelectQueryBuilder<
    DB,
    'segment_recipients',
    RecipientListRow
  >;
}

/** One member of one of the account's live segments. */
export function findRecipient(db: Db, userId: number, id: number) {
  // Through the account's segments: on PostgreSQL the key is (segment_id, id), not id alone.
  return db
    .selectFrom('segment_recipients as r')
    .select(['r.id', 'r.segment_id', 'r.contact_id'])
    .where('r.segment_id', 'in', db.selectFrom('segments').select('id').where('user_id', '=', userId).where('deleted_at', 'is', null))
    .where('r.id', '=', id)
    .where('r.user_id', '=', userId)
    .executeTakeFirst();
}

/** Removes a member; a matched contact also stays out until the segment is edited. */
export async function removeRecipient(db: Db, row: { id: number; segment_id: number; contact_id: number | null }): Promise<void> {
  await db.deleteFrom('segment_recipients').where('segment_id', '=', row.segment_id).where('id', '=', row.id).execute();
  if (row.contact_id !== null) {
    await db.insertInto('segment_exclusions').values({ segment_id: row.segment_id, contact_id: row.contact_id }).execute();
  }
}

/** Whether an address (lower-cased) is already a member: hand-added, or a matched live contact. */
export async function emailInSegment(
  db: Db,
  userId: number,
  segment: { id: number; contact_type_id: number },
  emailKey: string,
): Promise<boolean> {
  const hand = await db
    .selectFrom('segment_recipients')
    .select('id')
    .where('segment_id', '=', segment.id)
    .where('email_key', '=', emailKey)
    .executeTakeFirst();
  if (hand) return true;
  // Matched members are contacts of the segment's type: found through the contacts' email index.
  const matched = await db
    .selectFrom('contacts as c')
    .innerJoin('segment_recipients as r', (j) => j.onRef('r.contact_id', '=', 'c.id').on('r.segment_id', '=', segment.id))
    .select('r.id')
    .where('c.user_id', '=', userId)
    .where('c.contact_type_id', '=', segment.contact_type_id)
    .where('c.email_key', '=', emailKey)
    .where('c.deleted_at', 'is', null)
    .executeTakeFirst();
  return matched !== undefined;
}

/** Adds a recipient by hand; returns its id. */
export async function insertHandRecipient(
  db: Db,
  userId: number,
  segmentId: number,
  v: { first_name: string; last_name: string; email: string },
  now: Date,
) {
  const at = isoMicros(now);
  const row = await db
    .insertInto('segment_recipients')
    .values({
      user_id: userId,
      segment_id: segmentId,
      contact_id: null,
      ...v,
      email_key: v.email.toLowerCase(),
      created_at: at,
      updated_at: at,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}
