import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/index.js';
import { NotFound, RNF, ValidationError } from '../../http/errors.js';
import { messages, Rules, uniqueOr } from '../../http/messages.js';
import { toId } from '../../http/schemas.js';
import { queryListSource } from '../../http/list-source.js';
import {
  findContactType,
  findContactTypeByName,
  insertContactType,
  selectContactTypesWithCounts,
  softDeleteContactType,
  updateContactTypeName,
} from './contact-types.queries.js';
import { toContactType, type ContactTypeRow } from './contact-types.schema.js';
import { audienceChanged } from '../audience/audience.service.js';

/** The list source of the account's contact types with `contacts_count`. */
export function listContactTypes({ database: { db } }: AppDeps, userId: number) {
  return queryListSource(
    () => selectContactTypesWithCounts(db, userId),
    't.id',
    (rows: Array<ContactTypeRow & { contacts_count: unknown }>) =>
      rows.map((r) => ({ ...toContactType(r), contacts_count: Number(r.contacts_count ?? 0) })),
  );
}

async function assertNameFree(db: Db, userId: number, name: string, exceptId?: number): Promise<void> {
  if (await findContactTypeByName(db, userId, name, exceptId)) {
    throw new ValidationError({ name: [messages.unique('name')] });
  }
}

/** Creates a contact type; names are unique per account (case-insensitive). */
export async function createContactType({ database: { db }, clock }: AppDeps, userId: number, name: string): Promise<number> {
  await assertNameFree(db, userId, name);
  return uniqueOr('name', () => insertContactType(db, userId, name, clock.now()));
}

/** The contact type for `view`: a missing or unknown id is a field error on `contact_type_id`, not a 404. */
export async function viewContactType({ database: { db } }: AppDeps, userId: number, rawId: string | undefined) {
  const rules = new Rules();
  if (rawId === undefined) rules.add('contact_type_id', messages.required('contact_type_id'));
  const id = toId(rawId);
  const row = id ? await findContactType(db, userId, id) : undefined;
  if (!row && rawId !== undefined) rules.add('contact_type_id', messages.invalid('contact_type_id'));
  rules.done();
  return toContactType(row!);
}

/** Renames a contact type; the new name must be free in the account too. */
export async function renameContactType({ database: { db }, clock }: AppDeps, userId: number, id: number, name: string): Promise<void> {
  if (!(await findContactType(db, userId, id))) throw new NotFound(RNF);
  await assertNameFree(db, userId, name, id);
  await uniqueOr('name', () => updateContactTypeName(db, userId, id, name, clock.now()));
}

/** Soft-deletes a contact type and its contacts, in one transaction. */
export async function deleteContactType(deps: AppDeps, userId: number, rawId: unknown): Promise<void> {
  const id = toId(rawId);
  await deps.database.db.transaction().execute(async (trx) => {
    if (!id || !(await findContactType(trx, userId, id))) throw new NotFound(RNF);
    await softDeleteContactType(trx, userId, id, deps.clock.now());
    // Its contacts are gone: they leave every segment (the segments themselves stay).
    await audienceChanged(trx, deps, userId, { contactTypeId: id });
  });
}
