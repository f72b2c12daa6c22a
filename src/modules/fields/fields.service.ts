import type { Db } from '../../db/index.js';
import { queryListSource } from '../../db/list-source.js';
import { NotFound, RNF, ValidationError } from '../../http/errors.js';
import { messages } from '../../http/messages.js';
import { toId } from '../../http/schemas.js';
import { TAKEN_FIELD_NAMES } from './fields.reserved.js';
import { customFieldsByName, deleteCustomFieldAndValues, findCustomField, insertCustomField, selectFields } from './fields.queries.js';
import { toField, type FieldRow } from './fields.schema.js';

/** Reserved fields (userId null) or the account's custom fields, as a list source. */
export function fieldList(db: Db, userId: number | null) {
  return queryListSource(() => selectFields(db, userId), 'id', (rows: FieldRow[]) => rows.map(toField));
}

/** Creates a custom field: not a reserved or placeholder name, unique per account (case-insensitive). */
export async function createCustomField(db: Db, userId: number, name: string, type: string): Promise<number> {
  const key = name.toLowerCase();
  if (TAKEN_FIELD_NAMES.has(key)) throw new ValidationError({ field_name: [messages.invalid('field_name')] });
  const existing = await customFieldsByName(db, userId);
  if ([...existing.keys()].some((n) => n.toLowerCase() === key)) {
    throw new ValidationError({ field_name: [messages.unique('field_name')] });
  }
  return insertCustomField(db, userId, name, type);
}

/** Deletes one of the account's custom fields and its values on every contact. */
export async function deleteCustomField(db: Db, userId: number, rawId: unknown): Promise<void> {
  const id = toId(rawId);
  await db.transaction().execute(async (trx) => {
    const field = id ? await findCustomField(trx, userId, id) : undefined;
    if (!field) throw new NotFound(RNF);
    await deleteCustomFieldAndValues(trx, userId, field.id, field.field_name);
  });
}
