import type { AppDeps } from '../../deps.js';
import { queryListSource } from '../../http/list-source.js';
import { NotFound, RNF, type FieldErrors } from '../../http/errors.js';
import { messages, Rules } from '../../http/messages.js';
import { toId } from '../../http/schemas.js';
import {
  findUnsubscribeGroup,
  insertGroup,
  selectGroupsWithCounts,
  softDeleteGroup,
  updateGroupRow,
  type GroupValues,
} from './groups.queries.js';
import { toFlag, toGroup, type GroupInput, type UnsubscribeGroupRow } from './groups.schema.js';

/** The list source of the account's live groups with `unsubscribe_clients_count`. */
export function listUnsubscribeGroups(deps: AppDeps, userId: number) {
  const { db } = deps.database;
  return queryListSource(
    () => selectGroupsWithCounts(db, userId),
    'g.id',
    (rows: Array<UnsubscribeGroupRow & { unsubscribe_clients_count: unknown }>) =>
      rows.map((r) => ({ ...toGroup(r), unsubscribe_clients_count: Number(r.unsubscribe_clients_count ?? 0) })),
  );
}

/** The schema's failures plus the `boolean` rule on `is_display`, all reported together. */
function checkGroup(input: GroupInput, schemaFailures: FieldErrors): GroupValues {
  const rules = new Rules(schemaFailures);
  const flag = toFlag(input.is_display);
  if (!rules.failed('is_display') && flag === null) rules.add('is_display', messages.boolean('is_display'));
  rules.done();
  return { group_name: input.group_name, description: input.description, is_display: flag! };
}

/** Creates a group; returns its id. */
export async function createGroup(deps: AppDeps, userId: number, input: GroupInput, schemaFailures: FieldErrors): Promise<number> {
  return insertGroup(deps.database.db, userId, checkGroup(input, schemaFailures), deps.clock.now());
}

/** One live group of the account for `details`; a missing, malformed or foreign id is RNF. */
export async function getGroup(deps: AppDeps, userId: number, rawId: unknown) {
  const id = toId(rawId);
  const row = id ? await findUnsubscribeGroup(deps.database.db, userId, id) : undefined;
  if (!row) throw new NotFound(RNF);
  return toGroup(row);
}

/**
 * Replaces a group's fields. The group is looked up first: an unknown id is RNF whatever the body,
 * as for contacts; otherwise every field failure is reported together.
 */
export async function updateGroup(
  deps: AppDeps,
  userId: number,
  rawId: unknown,
  input: GroupInput,
  schemaFailures: FieldErrors,
): Promise<void> {
  const { db } = deps.database;
  const id = toId(rawId);
  if (!id || !(await findUnsubscribeGroup(db, userId, id))) throw new NotFound(RNF);
  const values = checkGroup(input, schemaFailures);
  if (!(await updateGroupRow(db, userId, id, values, deps.clock.now()))) throw new NotFound(RNF);
}

/** Soft-deletes a group: hidden from every endpoint, its recipients kept so suppression history stays. */
export async function deleteGroup(deps: AppDeps, userId: number, rawId: unknown): Promise<void> {
  const id = toId(rawId);
  if (!id || !(await softDeleteGroup(deps.database.db, userId, id, deps.clock.now()))) throw new NotFound(RNF);
}
