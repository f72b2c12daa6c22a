import { sql, type Expression } from 'kysely';
import type { AppDeps } from '../../deps.js';
import { engineOf, lockAccountSegments } from '../../db/dialect.js';
import type { ContactTable } from '../../db/types.js';
import { isoMicros } from '../../util/time.js';
import { conditionsOf, conditionsSql, fieldCatalogue, type FieldKind } from './segments.conditions.js';
import { publishMembershipChange } from './segments.changes.js';
import { customFieldTypes, segmentsOf, segmentsTouching } from './segments.queries.js';
import type { SegmentRow } from './segments.schema.js';
import type { Db } from '../../db/index.js';

/** Which contacts changed: all of a contact type, or some contacts of it. */
export interface ContactsChange {
  contactTypeId?: number;
  contactIds?: number[];
  /** A custom field was deleted: only the segments whose conditions name it are recomputed. */
  fieldName?: string;
}

/** Ids per statement: well under both engines' parameter limits. */
const CHUNK = 1000;

function parse(text: string): string[] {
  try {
    const v = JSON.parse(text);
    return Array.isArray(v) ? v.map(String) : [];
  } catch {
    return [];
  }
}

/** The account's field catalogue for compiling conditions (reserved + custom fields + created_at). */
export async function catalogueOf(db: Db, userId: number): Promise<Map<string, FieldKind>> {
  return fieldCatalogue(await customFieldTypes(db, userId));
}

/** A segment definition as stored: its contact type, the three condition arrays and `query_type`. */
export interface SegmentDefinition {
  contact_type_id: number;
  select_field: string[];
  select_operator: string[];
  value: string[];
  query_type: string | null;
}

/**
 * The live contacts of a definition's contact type that its conditions select (as `c`) at `now`:
 * what membership is computed from, and what `POST /segment/count` counts before a segment is saved.
 */
export function definitionCandidates(db: Db, userId: number, def: SegmentDefinition, catalogue: Map<string, FieldKind>, now: Date) {
  const conds = conditionsOf(def.select_field, def.select_operator, def.value);
  return db
    .selectFrom('contacts as c')
    .where('c.user_id', '=', userId)
    .where('c.contact_type_id', '=', def.contact_type_id)
    .where('c.deleted_at', 'is', null)
    .where(conditionsSql(engineOf(db), conds, def.query_type, catalogue, now));
}

/** The live contacts of the segment's type that its conditions select (as `c`) at `now`. */
export function segmentCandidates(db: Db, segment: SegmentRow, catalogue: Map<string, FieldKind>, now: Date) {
  const def: SegmentDefinition = {
    contact_type_id: segment.contact_type_id,
    select_field: parse(segment.select_field),
    select_operator: parse(segment.select_operator),
    value: parse(segment.value),
    query_type: segment.query_type,
  };
  return definitionCandidates(db, segment.user_id, def, catalogue, now);
}

/**
 * Brings one segment's matched members up to date, for every contact of its type or only for
 * `contactIds`: removes members that no longer match (one DELETE) and adds the matching contacts
 * that are neither members nor excluded (one INSERT … SELECT). Members that still match keep
 * their row, id and `created_at` (the time they joined). `fresh` (a new segment) skips both
 * membership checks: there is nothing to remove or skip yet. New members join at `now`.
 */
export async function refreshSegmentMembers(
  db: Db,
  segment: SegmentRow,
  catalogue: Map<string, FieldKind>,
  now: Date,
  opts: { contactIds?: number[]; fresh?: boolean } = {},
): Promise<void> {
  const ids = opts.contactIds;
  const candidates = () => segmentCandidates(db, segment, catalogue, now);

  if (!opts.fresh) {
    await db
      .deleteFrom('segment_recipients')
      .where('segment_id', '=', segment.id)
      .where('contact_id', 'is not', null)
      .$if(ids !== undefined, (q) => q.where('contact_id', 'in', ids!))
      .where((eb) =>
        eb.not(eb.exists(candidates().select(sql.lit(1).as('one')).where('c.id', '=', sql.ref<number>('segment_recipients.contact_id')))),
      )
      .execute();
  }

  const joining = candidates()
    .$if(ids !== undefined, (q) => q.where('c.id', 'in', ids!))
    .$if(!opts.fresh, (q) =>
      q
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('segment_recipients as r')
                .select(sql.lit(1).as('one'))
                .whereRef('r.contact_id', '=', 'c.id')
                .where('r.segment_id', '=', segment.id),
            ),
          ),
        )
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('segment_exclusions as x')
                .select(sql.lit(1).as('one'))
                .whereRef('x.contact_id', '=', 'c.id')
                .where('x.segment_id', '=', segment.id),
            ),
          ),
        ),
    );
  const at = isoMicros(now);
  const member = (contactId: Expression<number>) => [
    sql<number>`cast(${segment.user_id} as integer)`.as('user_id'),
    sql<number>`cast(${segment.id} as integer)`.as('segment_id'),
    sql<number>`${contactId}`.as('contact_id'),
    sql<string>`cast(${at} as text)`.as('created_at'),
    sql<string>`cast(${at} as text)`.as('updated_at'),
  ];

  let source;
  if (engineOf(db) === 'postgres' && ids === undefined) {
    // PostgreSQL never runs the SELECT of an INSERT … SELECT with parallel workers. Over a whole
    // contact type the filter is the larger half of the work: read the joining ids first (a plain
    // SELECT, parallel like the count), then insert them from one array. The ids are sorted as
    // bare integers (sorting the projected rows in the INSERT spills to disk at 100,000 members),
    // unnest keeps their order, and the array travels as text both ways.
    const { joined } = await joining
      .select(sql<string | null>`cast(array_agg(c.id order by c.id) as text)`.as('joined'))
      .executeTakeFirstOrThrow();
    if (joined === null) return;
    source = db.selectFrom(sql<{ u: number }>`unnest(cast(${joined} as integer[]))`.as('u')).select(member(sql.ref('u')));
  } else {
    // Ascending ids, so the recipient list (newest first) follows the contacts' order.
    source = joining.select(member(sql.ref('c.id'))).orderBy('c.id');
  }
  await db
    .insertInto('segment_recipients')
    .columns(['user_id', 'segment_id', 'contact_id', 'created_at', 'updated_at'])
    .expression(source)
    .execute();
}

/**
 * Keeps segment membership current after contacts are added, updated, imported or deleted, or
 * custom fields change: membership is always the segment's current matches. Call it inside the
 * transaction that made the change; the segments it recomputed are published there too.
 * `{ contactIds }` refreshes only those contacts in the segments they are in or may enter;
 * `{ contactTypeId }` recomputes the segments of that type; `{ fieldName }` those naming the
 * field; `{}` every segment of the account.
 */
export async function syncSegmentMembership(trx: Db, deps: AppDeps, userId: number, change: ContactsChange): Promise<void> {
  await lockAccountSegments(trx, userId);
  const now = deps.clock.now();
  const ids = change.contactIds ? [...new Set(change.contactIds)] : undefined;
  if (ids && ids.length === 0) return;
  let segments: SegmentRow[];
  if (ids) segments = ids.length <= CHUNK ? await segmentsTouching(trx, userId, ids) : await segmentsOf(trx, userId);
  else segments = await segmentsOf(trx, userId, change.contactTypeId);
  if (change.fieldName !== undefined) segments = segments.filter((s) => parse(s.select_field).includes(change.fieldName!));
  if (segments.length === 0) return;

  const catalogue = await catalogueOf(trx, userId);
  for (const segment of segments) {
    if (!ids) {
      await refreshSegmentMembers(trx, segment, catalogue, now);
      continue;
    }
    for (let i = 0; i < ids.length; i += CHUNK) {
      await refreshSegmentMembers(trx, segment, catalogue, now, { contactIds: ids.slice(i, i + CHUNK) });
    }
  }
  await publishMembershipChange(trx, deps, { userId, segmentIds: segments.map((s) => s.id), contactIds: ids });
}

/**
 * Recomputes one segment's members at `now` (the segment as given: a definition just changed) and
 * publishes the change, in the caller's transaction, under the account's membership lock.
 */
export async function recomputeSegment(trx: Db, deps: AppDeps, segment: SegmentRow, now: Date): Promise<void> {
  await refreshSegmentMembers(trx, segment, await catalogueOf(trx, segment.user_id), now);
  await publishMembershipChange(trx, deps, { userId: segment.user_id, segmentIds: [segment.id] });
}

/** One member as delivery needs it: the matched contact's fields, or the hand-added ones. */
export type SegmentRecipient = {
  recipient_id: number;
  contact_id: number | null;
  email: string;
  first_name: string;
  last_name: string;
  /** Null for a hand-added recipient, like the other contact fields. */
  country: string | null;
} & {
  // The contact's own fields as stored (custom_field: JSON text), null for a hand-added recipient.
  [K in 'alt_email' | 'state' | 'city' | 'address_line1' | 'address_line2' | 'state_province_region' | 'postal_code' | 'custom_field']:
    ContactTable[K] | null;
};

/**
 * Every current member of one of the account's live segments, in batches of `batchSize`
 * (keyset on the member id, ascending), so a large segment is never read whole into memory.
 * Yields nothing for an unknown, deleted or other account's segment.
 */
export async function* segmentRecipients(db: Db, userId: number, segmentId: number, batchSize = 1000): AsyncGenerator<SegmentRecipient[]> {
  const live = await db
    .selectFrom('segments')
    .select('id')
    .where('id', '=', segmentId)
    .where('user_id', '=', userId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!live) return;
  let after = 0;
  for (;;) {
    const rows = await db
      .selectFrom('segment_recipients as r')
      .leftJoin('contacts as c', 'c.id', 'r.contact_id')
      .select([
        'r.id as recipient_id',
        'r.contact_id',
        sql<string>`coalesce(c.email, r.email)`.as('email'),
        sql<string>`coalesce(c.first_name, r.first_name, '')`.as('first_name'),
        sql<string>`coalesce(c.last_name, r.last_name, '')`.as('last_name'),
        'c.alt_email',
        'c.country',
        'c.state',
        'c.city',
        'c.address_line1',
        'c.address_line2',
        'c.state_province_region',
        'c.postal_code',
        'c.custom_field',
      ])
      .where('r.segment_id', '=', segmentId)
      .where('r.user_id', '=', userId)
      .where('r.id', '>', after)
      .where((eb) => eb.or([eb('r.contact_id', 'is', null), eb('c.deleted_at', 'is', null)]))
      .orderBy('r.id')
      .limit(batchSize)
      .execute();
    if (rows.length === 0) return;
    yield rows as SegmentRecipient[];
    if (rows.length < batchSize) return;
    after = rows[rows.length - 1].recipient_id;
  }
}
