import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/index.js';
import { queryListSource } from '../../http/list-source.js';
import { NotFound, Rnf, type FieldErrors } from '../../http/errors.js';
import { messages, Rules } from '../../http/messages.js';
import { MAX_ID, toId } from '../../http/schemas.js';
import { RESERVED_FIELDS } from '../../reference/fields.js';
import { findContactType } from '../contact-types/contact-types.queries.js';
import { customFieldsByName } from '../fields/fields.queries.js';
import { senderFailure } from '../senders/senders.service.js';
import { findUnsubscribeGroup } from '../unsubscribes/groups.queries.js';
import { deleteForm, findForm, insertForm, selectForms, updateFormRow } from './forms.queries.js';
import { toForm, type Form, type FormInput, type FormRow } from './forms.schema.js';

const inRange = (id: number) => id >= 1 && id <= MAX_ID;
const RESERVED = new Set<string>(RESERVED_FIELDS.map((f) => f.name));

/** The list source of the account's forms. */
export function listForms(deps: AppDeps, userId: number) {
  return queryListSource(
    () => selectForms(deps.database.db, userId),
    'id',
    (rows: FormRow[]) => rows.map((r) => toForm(r, deps.config.publicUrl)),
  );
}

/** One form of the account; `Record not found` otherwise. */
export async function getForm(deps: AppDeps, userId: number, rawId: unknown): Promise<Form> {
  const id = toId(rawId);
  const row = id ? await findForm(deps.database.db, userId, id) : undefined;
  if (!row) throw new NotFound(Rnf);
  return toForm(row, deps.config.publicUrl);
}

/** Whether a redirect target is an absolute http or https address. */
function isWebUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * Checks the rules that need the database (contact type, sender verified, group, the fields among
 * the reserved and the account's custom ones) on top of the schema's failures, reports all
 * together, and returns the columns to store.
 */
async function checkForm(deps: AppDeps, db: Db, userId: number, input: FormInput, rules: Rules) {
  await rules.check('contact_type_id', input.contact_type_id, async (id) =>
    inRange(id) && (await findContactType(db, userId, id)) ? null : messages.invalid('contact_type_id'),
  );
  await rules.check('sender_id', input.sender_id, async (id) =>
    inRange(id) ? senderFailure(deps, userId, id) : messages.invalid('sender_id'),
  );
  await rules.check('unsubscribe_group_id', input.unsubscribe_group_id, async (id) =>
    inRange(id) && (await findUnsubscribeGroup(db, userId, id)) ? null : messages.invalid('unsubscribe_group_id'),
  );
  await rules.check('redirect_url', input.redirect_url, (url) => (url === '' || isWebUrl(url) ? null : messages.format('redirect_url')));
  const fields = ['email'];
  if (input.fields?.length && !rules.failed('fields')) {
    // Custom field names match case-insensitively (they are unique that way) and are stored as defined.
    const custom = new Map([...(await customFieldsByName(db, userId)).keys()].map((n) => [n.toLowerCase(), n]));
    input.fields.forEach((given, i) => {
      const name = given.trim();
      const canonical = RESERVED.has(name.toLowerCase()) ? name.toLowerCase() : custom.get(name.toLowerCase());
      if (!canonical) rules.add(`fields.${i}`, messages.invalid(`fields.${i}`));
      else if (!fields.includes(canonical)) fields.push(canonical);
    });
  }
  rules.done();
  return {
    name: input.name,
    contact_type_id: input.contact_type_id,
    fields: JSON.stringify(fields),
    unsubscribe_group_id: input.unsubscribe_group_id ?? null,
    sender_id: input.sender_id,
    redirect_url: input.redirect_url || null,
    confirmation_subject: input.confirmation_subject?.trim() || null,
    confirmation_text: input.confirmation_text?.trim() || null,
  };
}

/** Creates a form; returns its id and the HTML to embed. */
export async function createForm(deps: AppDeps, userId: number, input: FormInput, schemaFailures: FieldErrors) {
  const { db } = deps.database;
  const values = await checkForm(deps, db, userId, input, new Rules(schemaFailures));
  const id = await insertForm(db, { user_id: userId, ...values }, deps.clock.now());
  return { id, embed_html: (await getForm(deps, userId, id)).embed_html };
}

/** Replaces a form's settings with the given ones (update takes every field create takes). */
export async function updateForm(deps: AppDeps, userId: number, input: FormInput & { id: number }, schemaFailures: FieldErrors) {
  const { db } = deps.database;
  const rules = new Rules(schemaFailures);
  if (!rules.failed('id') && !(inRange(input.id) && (await findForm(db, userId, input.id)))) throw new NotFound(Rnf);
  const values = await checkForm(deps, db, userId, input, rules);
  await updateFormRow(db, userId, input.id, values, deps.clock.now());
}

/** Deletes a form of the account: its pending sign-ups go with it, the consents it collected stay. */
export async function removeForm(deps: AppDeps, userId: number, rawId: unknown): Promise<void> {
  const id = toId(rawId);
  if (!id || !(await deleteForm(deps.database.db, userId, id))) throw new NotFound(Rnf);
}
