import type { AppDeps } from '../../deps.js';
import { queryListSource } from '../../http/list-source.js';
import { NotFound, RNF, type FieldErrors } from '../../http/errors.js';
import { messages, Rules, uniqueOr } from '../../http/messages.js';
import { toId } from '../../http/schemas.js';
import { TAKEN_FIELD_NAMES } from '../../reference/fields.js';
import { customFieldsByName, deleteCustomFieldAndValues, findCustomField, insertCustomField, selectFields } from './fields.queries.js';
import { toField, type FieldRow } from './fields.schema.js';
import { audienceChanged } from '../audience/audience.service.js';

/** Reserved fields (userId null) or the account's custom fields, as a list source. */
export function listFields({ database: { db } }: AppDeps, userId: number | null) {
  return queryListSource(
    () => selectFields(db, userId),
    'id',
    (rows: FieldRow[]) => rows.map(toField),
  );
}

/**
 * Creates a custom field: not a reserved or placeholder name, unique per account (case-insensitive).
 * The schema's failures (`schemaFailures`) are reported together with these rules.
 */
export async function createCustomField(
  { database: { db }, clock }: AppDeps,
  userId: number,
  input: { field_name?: string; field_type?: string },
  schemaFailures: FieldErrors = {},
): Promise<number> {
  const rules = new Rules(schemaFailures);
  await rules.check('field_name', input.field_name, async (name) => {
    const key = name.toLowerCase();
    if (TAKEN_FIELD_NAMES.has(key)) return messages.invalid('field_name');
    const existing = await customFieldsByName(db, userId);
    return [...existing.keys()].some((n) => n.toLowerCase() === key) ? messages.unique('field_name') : null;
  });
  rules.done();
  return uniqueOr('field_name', () => insertCustomField(db, userId, input.field_name!, input.field_type!, clock.now()));
}

/** Deletes one of the account's custom fields and its values on every contact. */
export async function deleteCustomField(deps: AppDeps, userId: number, rawId: unknown): Promise<void> {
  const id = toId(rawId);
  await deps.database.db.transaction().execute(async (trx) => {
    const field = id ? await findCustomField(trx, userId, id) : undefined;
    if (!field) throw new NotFound(RNF);
    await deleteCustomFieldAndValues(trx, userId, field.id, field.field_name);
    // Segments naming the field keep their conditions; the field now reads as empty (docs/segments.md),
    // and segments that now match more contacts bring joiners to automations.
    await audienceChanged(trx, deps, userId, { fieldName: field.field_name });
  });
}
