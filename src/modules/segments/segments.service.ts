import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/index.js';
import { lockAccountSegments } from '../../db/dialect.js';
import { queryListSource } from '../../http/list-source.js';
import { NotFound, RNF, Rnf, type FieldErrors } from '../../http/errors.js';
import { messages, Rules, uniqueOr } from '../../http/messages.js';
import { toId } from '../../http/schemas.js';
import { parseConditions, arity, type Condition } from './segments.conditions.js';
import { INVALID_SEND, SINGLE_SEND_FIELD, SINGLE_SEND_OPERATORS } from './segments.engagement.js';
import { publishMembershipChange } from './segments.changes.js';
import { catalogueOf, definitionCandidates, recomputeSegment, refreshSegmentMembers } from './segments.membership.js';
import {
  contactTypeExists,
  emailInSegment,
  findRecipient,
  findSegment,
  insertHandRecipient,
  insertSegment,
  removeRecipient,
  selectRecipients,
  selectSegmentsWithCounts,
  sendUtrsOf,
  softDeleteSegment,
  updateSegmentRow,
  type SegmentValues,
} from './segments.queries.js';
import {
  toSegment,
  toSegmentRecipient,
  type ConditionsInput,
  type RecipientInput,
  type RecipientListRow,
  type SegmentInput,
  type SegmentRow,
} from './segments.schema.js';

/**
 * The list source of the account's segments with `segment_emails_count`: the members as stored. A
 * segment with engagement conditions counts those of its last recomputation (segments.live.ts).
 */
export function listSegments(deps: AppDeps, userId: number) {
  const { db } = deps.database;
  return queryListSource(
    () => selectSegmentsWithCounts(db, userId),
    's.id',
    (rows: Array<SegmentRow & { segment_emails_count: unknown }>) =>
      rows.map((r) => ({ ...toSegment(r), segment_emails_count: Number(r.segment_emails_count ?? 0) })),
  );
}

/**
 * Checks the definition of a create/update/count body on top of the schema's failures (the
 * contact type is the account's, each condition names a known field, an operator that suits it
 * and the values it takes) and returns it as it would be stored.
 */
async function checkDefinition(db: Db, userId: number, input: ConditionsInput, rules: Rules): Promise<Omit<SegmentValues, 'segment_name'>> {
  await rules.check('contact_type_id', input.contact_type_id, async (id) =>
    (await contactTypeExists(db, userId, id)) ? null : messages.invalid('contact_type_id'),
  );
  const conditions = parseConditions(input, await catalogueOf(db, userId), rules);
  await checkSendValues(db, userId, conditions, rules);
  rules.done();
  return {
    contact_type_id: input.contact_type_id,
    select_field: conditions.map((c) => c.field),
    select_operator: conditions.map((c) => c.operator),
    // Only the entries the operators take (none for `is empty`), in order.
    value: conditions.flatMap((c) => c.values.slice(0, arity(c.operator))),
    query_type: input.query_type ?? 'and',
  };
}

const isSendOperator = (op: string) => (SINGLE_SEND_OPERATORS as readonly string[]).includes(op);

/**
 * Each `single_send` condition's value must be the `utr` of a live single send of the account
 * (another account's is invalid too): `The selected value is invalid.` on its `value` entry.
 */
async function checkSendValues(db: Db, userId: number, conditions: Condition[], rules: Rules): Promise<void> {
  // Only where the operator suits the field: any other operator has failed already, as for every field.
  const wanted = conditions.filter(
    (c) => c.field === SINGLE_SEND_FIELD && isSendOperator(c.operator) && c.at !== undefined && c.values[0] !== undefined,
  );
  if (wanted.length === 0) return;
  const known = await sendUtrsOf(
    db,
    userId,
    wanted.map((c) => c.values[0].trim()),
  );
  for (const c of wanted) if (!known.has(c.values[0].trim()) && !rules.failed(`value.${c.at}`)) rules.add(`value.${c.at}`, INVALID_SEND);
}

/** A create/update body's definition and name, checked (see `checkDefinition`). */
async function checkSegment(db: Db, userId: number, input: SegmentInput, rules: Rules): Promise<SegmentValues> {
  const definition = await checkDefinition(db, userId, input, rules);
  return { segment_name: input.segment_name, ...definition };
}

/**
 * How many contacts a definition matches now, checked as create checks it: the matched members a
 * segment saved with it would start with. Counted by the same filter that computes membership.
 */
export async function countSegmentMatches(
  deps: AppDeps,
  userId: number,
  input: ConditionsInput,
  schemaFailures: FieldErrors,
): Promise<number> {
  const { db } = deps.database;
  const definition = await checkDefinition(db, userId, input, new Rules(schemaFailures));
  const row = await definitionCandidates(db, userId, definition, await catalogueOf(db, userId), deps.clock.now())
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Creates a segment and computes its membership in the same transaction; returns its id. */
export async function createSegment(deps: AppDeps, userId: number, input: SegmentInput, schemaFailures: FieldErrors): Promise<number> {
  const { db } = deps.database;
  const values = await checkSegment(db, userId, input, new Rules(schemaFailures));
  return db.transaction().execute(async (trx) => {
    await lockAccountSegments(trx, userId);
    const now = deps.clock.now();
    const id = await insertSegment(trx, userId, values, now);
    const row = (await findSegment(trx, userId, id))!;
    await refreshSegmentMembers(trx, row, await catalogueOf(trx, userId), now, { fresh: true });
    await publishMembershipChange(trx, deps, { userId, segmentIds: [id] });
    return id;
  });
}

/**
 * Replaces a segment's definition and recomputes its membership: members that still match keep
 * their place, hand-added recipients stay, and matched contacts removed by hand come back.
 */
export async function updateSegment(
  deps: AppDeps,
  userId: number,
  input: SegmentInput & { segment_id: number },
  schemaFailures: FieldErrors,
): Promise<void> {
  const { db } = deps.database;
  const rules = new Rules(schemaFailures);
  if (!rules.failed('segment_id') && !(await findSegment(db, userId, input.segment_id))) throw new NotFound(RNF);
  const values = await checkSegment(db, userId, input, rules);
  await db.transaction().execute(async (trx) => {
    await lockAccountSegments(trx, userId);
    if (!(await findSegment(trx, userId, input.segment_id))) throw new NotFound(RNF);
    const now = deps.clock.now();
    await updateSegmentRow(trx, userId, input.segment_id, values, now);
    await recomputeSegment(trx, deps, (await findSegment(trx, userId, input.segment_id))!, now);
  });
}

/** Soft-deletes a segment and drops its members. */
export async function deleteSegment(deps: AppDeps, userId: number, rawId: unknown): Promise<void> {
  const id = toId(rawId);
  await deps.database.db.transaction().execute(async (trx) => {
    if (!id || !(await findSegment(trx, userId, id))) throw new NotFound(RNF);
    await lockAccountSegments(trx, userId);
    await softDeleteSegment(trx, userId, id, deps.clock.now());
  });
}

/**
 * The list source of a segment's members as stored (`Record not found` for an unknown segment): a
 * segment with engagement conditions lists those of its last recomputation (segments.live.ts).
 */
export async function listSegmentRecipients(deps: AppDeps, userId: number, rawSegmentId: unknown) {
  const { db } = deps.database;
  const id = toId(rawSegmentId);
  if (!id || !(await findSegment(db, userId, id))) throw new NotFound(Rnf);
  return queryListSource(
    () => selectRecipients(db, userId, id),
    'r.id',
    (rows: RecipientListRow[]) => rows.map(toSegmentRecipient),
  );
}

/** Adds a recipient by hand; an address already in the segment is a field error on `email`. */
export async function addRecipient(deps: AppDeps, userId: number, input: RecipientInput, schemaFailures: FieldErrors): Promise<number> {
  const { db } = deps.database;
  const rules = new Rules(schemaFailures);
  const segment = rules.failed('segment_id') ? undefined : await findSegment(db, userId, input.segment_id);
  if (!segment && !rules.failed('segment_id')) rules.add('segment_id', messages.invalid('segment_id'));
  if (segment && !rules.failed('email') && (await emailInSegment(db, userId, segment, input.email.toLowerCase()))) {
    rules.add('email', messages.unique('email'));
  }
  rules.done();
  // Two requests adding the same address at once: the unique index decides. The recipient and its
  // automation enrollments are written together, under the account's membership lock.
  return uniqueOr('email', () =>
    db.transaction().execute(async (trx) => {
      await lockAccountSegments(trx, userId);
      const id = await insertHandRecipient(
        trx,
        userId,
        segment!.id,
        {
          first_name: input.first_name,
          last_name: input.last_name,
          email: input.email,
        },
        deps.clock.now(),
      );
      await publishMembershipChange(trx, deps, { userId, segmentIds: [segment!.id] });
      return id;
    }),
  );
}

/**
 * Removes a member. A hand-added recipient is deleted; a matched contact is excluded from the
 * segment until the segment is edited (the contact itself is untouched).
 */
export async function deleteRecipient(deps: AppDeps, userId: number, rawId: unknown): Promise<void> {
  const id = toId(rawId);
  await deps.database.db.transaction().execute(async (trx) => {
    await lockAccountSegments(trx, userId);
    const row = id ? await findRecipient(trx, userId, id) : undefined;
    if (!row) throw new NotFound(RNF);
    await removeRecipient(trx, row);
  });
}
