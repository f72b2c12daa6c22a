import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/index.js';
import { queryListSource } from '../../http/list-source.js';
import { NotFound, RNF, type FieldErrors } from '../../http/errors.js';
import { label, messages, Rules, uniqueOr } from '../../http/messages.js';
import { toId } from '../../http/schemas.js';
import { findContactType } from '../contact-types/contact-types.queries.js';
import { toContactType } from '../contact-types/contact-types.schema.js';
import { customFieldsByName } from '../fields/fields.queries.js';
import { RESERVED_EXTRAS } from '../../reference/fields.js';
import { countryById } from '../../reference/geo.js';
import { audienceChanged } from '../audience/audience.service.js';
import {
  contactTypesByIds,
  countContacts,
  findContact,
  findContactQuery,
  findContactIdByEmail,
  insertContact,
  searchContactRows,
  selectContacts,
  softDeleteContacts,
  updateContactRow,
} from './contacts.queries.js';
import { toContact, type ContactInput, type ContactRow } from './contacts.schema.js';
import { fieldTypeMessage, fitsFieldType, parseCustomValues, serializeCustomValues, type CustomValues } from './contacts.values.js';

/** Whether an integer fits the id columns (int4 on PostgreSQL). */
const isDbId = (id: number) => id >= 1 && id <= 2_147_483_647;

/** The list source of the account's contacts: country names and the `contact_type` object. */
export function listContacts({ database: { db } }: AppDeps, userId: number) {
  const source = queryListSource(
    () => selectContacts(db, userId),
    'id',
    (rows: ContactRow[]) => toListItems(db, userId, rows),
  );
  // The page's `meta.total` from the kept per-type totals, not a count of every live contact.
  return { ...source, count: () => countContacts(db, userId) };
}

/** Contact rows as list items: country names and the `contact_type` object (its types read once). */
async function toListItems(db: Db, userId: number, rows: ContactRow[]) {
  const typeIds = [...new Set(rows.map((r) => r.contact_type_id))];
  const types = new Map((typeIds.length ? await contactTypesByIds(db, userId, typeIds) : []).map((t) => [t.id, toContactType(t)]));
  return rows.map((r) => ({ ...toContact(r, 'name'), contact_type: types.get(r.contact_type_id) ?? null }));
}

/**
 * One page of the contacts whose email starts with `q` (any case), in address order; newest first
 * without `q`. `has_more` says whether a next page exists: a page costs the same on any account
 * size, where a count of the matches would grow with it.
 */
export async function searchContacts(
  { database: { db } }: AppDeps,
  userId: number,
  query: { q?: string; page?: number; per_page?: number },
) {
  const page = query.page ?? 1;
  const perPage = query.per_page ?? 50;
  const rows = await searchContactRows(db, userId, (query.q ?? '').trim().toLowerCase(), (page - 1) * perPage, perPage + 1);
  return {
    contacts: await toListItems(db, userId, rows.slice(0, perPage)),
    meta: { page, per_page: perPage, has_more: rows.length > perPage },
  };
}

/** One contact, country as its id (details). */
export async function getContact({ database }: AppDeps, userId: number, rawId: unknown) {
  const id = toId(rawId);
  const row = id ? (await database.read(findContactQuery(database.db, userId, id)))[0] : undefined;
  if (!row) throw new NotFound(RNF);
  return toContact(row, 'id');
}

/**
 * Checks the rules that need the database (contact type, country, custom fields, unique email)
 * on top of the schema's failures, reports all together, and returns the new custom values.
 */
async function checkContact(
  db: Db,
  userId: number,
  input: ContactInput,
  rules: Rules,
  current: CustomValues,
  exceptId?: number,
): Promise<CustomValues> {
  // The schema only says "integer": out-of-range ids are "invalid" like unknown ones (and never reach PostgreSQL's int4).
  await rules.check('contact_type_id', input.contact_type_id, async (id) =>
    isDbId(id) && (await findContactType(db, userId, id)) ? null : messages.invalid('contact_type_id'),
  );
  await rules.check('country', input.country, (id) => (countryById(id) ? null : messages.invalid('country')));
  const values: CustomValues = { ...current };
  const given = input.custom_field ?? {};
  if (Object.keys(given).length && !rules.failed('custom_field')) {
    // Names match case-insensitively (they are unique that way); the reserved extras are accepted here too.
    const defs = new Map<string, { name: string; type: string }>(RESERVED_EXTRAS.map((f) => [f.name, { name: f.name, type: f.type }]));
    for (const [name, def] of await customFieldsByName(db, userId)) defs.set(name.toLowerCase(), { name, type: def.field_type });
    for (const [name, value] of Object.entries(given)) {
      const key = `custom_field.${name}`;
      const def = defs.get(name.toLowerCase());
      if (!def) rules.add(key, messages.invalid(key));
      else if (value === null || value === '') delete values[def.name];
      else if (!fitsFieldType(def.type, value)) rules.add(key, fieldTypeMessage(def.type, label(key)));
      else values[def.name] = value;
    }
  }
  // The six extras as plain fields, checked against their reserved type; they win over custom_field[...].
  for (const { name, type } of RESERVED_EXTRAS) {
    const v = (input as Record<string, unknown>)[name];
    if (v === undefined || rules.failed(name)) continue;
    if (fitsFieldType(type, String(v))) values[name] = String(v);
    else rules.add(name, fieldTypeMessage(type, label(name)));
  }
  if (!rules.failed('contact_type_id') && !rules.failed('email') && input.contact_type_id && input.email) {
    if (await findContactIdByEmail(db, userId, input.contact_type_id, input.email, exceptId)) rules.add('email', messages.unique('email'));
  }
  rules.done();
  return values;
}

function columnsOf(input: ContactInput, custom: CustomValues) {
  return {
    contact_type_id: input.contact_type_id,
    first_name: input.first_name ?? '',
    last_name: input.last_name ?? '',
    email: input.email,
    email_key: input.email.toLowerCase(),
    alt_email: input.alt_email ?? null,
    country: String(input.country),
    state: input.state ?? null,
    city: input.city ?? null,
    address_line1: input.address_line1 ?? null,
    address_line2: input.address_line2 ?? null,
    state_province_region: input.state_province_region ?? null,
    postal_code: input.postal_code ?? null,
    custom_field: serializeCustomValues(custom),
  };
}

/** Adds a contact; returns its id. */
export async function addContact(deps: AppDeps, userId: number, input: ContactInput, schemaFailures: FieldErrors): Promise<number> {
  const { db } = deps.database;
  const custom = await checkContact(db, userId, input, new Rules(schemaFailures), {});
  // The contact, its segment membership and its automation enrollments change together.
  return uniqueOr('email', () =>
    db.transaction().execute(async (trx) => {
      const id = await insertContact(trx, { user_id: userId, ...columnsOf(input, custom) }, deps.clock.now());
      await audienceChanged(trx, deps, userId, { contactIds: [id] });
      return id;
    }),
  );
}

/**
 * Replaces a contact's standard fields with the given ones (update takes every field add takes);
 * custom values are merged, so a client that does not send them keeps them, and one sent empty
 * (`custom_field[name]=`) is cleared.
 */
export async function updateContact(
  deps: AppDeps,
  userId: number,
  input: ContactInput & { contact_id: number },
  schemaFailures: FieldErrors,
): Promise<void> {
  const { db } = deps.database;
  const rules = new Rules(schemaFailures);
  const row = rules.failed('contact_id') || !isDbId(input.contact_id) ? undefined : await findContact(db, userId, input.contact_id);
  if (!row && !rules.failed('contact_id')) throw new NotFound(RNF);
  const custom = await checkContact(db, userId, input, rules, parseCustomValues(row?.custom_field ?? null), input.contact_id);
  await uniqueOr('email', () =>
    db.transaction().execute(async (trx) => {
      await updateContactRow(trx, userId, input.contact_id, columnsOf(input, custom), deps.clock.now());
      await audienceChanged(trx, deps, userId, { contactIds: [input.contact_id] });
    }),
  );
}

/** Soft-deletes one contact; it leaves its segments in the same transaction. */
export async function deleteContact(deps: AppDeps, userId: number, rawId: unknown): Promise<void> {
  const id = toId(rawId);
  if (!id) throw new NotFound(RNF);
  await deps.database.db.transaction().execute(async (trx) => {
    if ((await softDeleteContacts(trx, userId, [id], deps.clock.now())) === 0) throw new NotFound(RNF);
    await audienceChanged(trx, deps, userId, { contactIds: [id] });
  });
}

/** Soft-deletes the account's contacts among `ids`; not found when none of them is. */
export async function bulkDeleteContacts(deps: AppDeps, userId: number, ids: number[]): Promise<number> {
  const unique = [...new Set(ids)];
  return deps.database.db.transaction().execute(async (trx) => {
    const n = await softDeleteContacts(trx, userId, unique, deps.clock.now());
    if (n === 0) throw new NotFound(RNF);
    await audienceChanged(trx, deps, userId, { contactIds: unique });
    return n;
  });
}
