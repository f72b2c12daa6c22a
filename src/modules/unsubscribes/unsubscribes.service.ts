import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/index.js';
import { queryListSource } from '../../http/list-source.js';
import { NotFound, RNF, ValidationError, type FieldErrors } from '../../http/errors.js';
import { messages, Rules } from '../../http/messages.js';
import { toId } from '../../http/schemas.js';
import { findGroupAnyState, findUnsubscribeGroup } from './groups.queries.js';
import { applyAddressEvents, unsubscribeAddresses } from '../../suppression/suppression.policy.js';
import { isEmail } from '../../util/email.js';
import { deleteUnsubscribers, selectUnsubscribers, type GroupKey } from './unsubscribes.queries.js';
import { MAX_ADDRESSES, parseEmailList, toUnsubscriber, type UnsubscriberRow } from './unsubscribes.schema.js';

/** What delete and bulk delete may touch: global entries, or recipients of the account's live groups. */
export type UnsubscribeList = 'global' | 'groups';

/** The list source of one list of the account: global entries (null) or a group's recipients. */
function listUnsubscribers(db: Db, userId: number, groupId: GroupKey) {
  return queryListSource(
    () => selectUnsubscribers(db, userId, groupId),
    'id',
    (rows: UnsubscriberRow[]) => rows.map(toUnsubscriber),
  );
}

/** The account's global unsubscribe list. */
export function listGlobalUnsubscribes(deps: AppDeps, userId: number) {
  return listUnsubscribers(deps.database.db, userId, null);
}

/** A live group's recipients; a missing, malformed, foreign or deleted group is RNF. */
export async function listGroupRecipients(deps: AppDeps, userId: number, rawGroupId: unknown) {
  const { db } = deps.database;
  const groupId = toId(rawGroupId);
  if (!groupId || !(await findUnsubscribeGroup(db, userId, groupId))) throw new NotFound(RNF);
  return listUnsubscribers(db, userId, groupId);
}

/**
 * Checks `email_address` (addresses separated by commas, each a valid address, at least one and
 * at most MAX_ADDRESSES) into `rules`; returns the addresses.
 */
function checkEmailList(rules: Rules, value: string | undefined): string[] {
  if (rules.failed('email_address') || value === undefined) return [];
  const { emails, invalid } = parseEmailList(value);
  if (invalid) rules.add('email_address', messages.email('email_address'));
  else if (emails.length === 0) rules.add('email_address', messages.required('email_address'));
  else if (emails.length > MAX_ADDRESSES) rules.add('email_address', messages.maxItems('email_address', MAX_ADDRESSES));
  return emails;
}

/**
 * Adds a checked list in one transaction, so a failing chunk leaves none of the list behind (nor
 * any of its `contact.unsubscribed` events).
 */
async function addToList(deps: AppDeps, userId: number, groupId: GroupKey, emails: string[]): Promise<number[]> {
  const now = deps.clock.now();
  return deps.database.db.transaction().execute(async (trx) => (await unsubscribeAddresses(trx, userId, groupId, emails, now)).ids);
}

/** Adds addresses to the global list (present ones are no-ops); returns each address's entry id. */
export async function addGlobalUnsubscribes(deps: AppDeps, userId: number, emailList: string): Promise<number[]> {
  const rules = new Rules();
  const emails = checkEmailList(rules, emailList);
  rules.done();
  return addToList(deps, userId, null, emails);
}

/**
 * Adds addresses to a live group of the account (`manually-add`); the group rule and the address
 * rule are reported together with the schema's failures. Returns each address's entry id.
 */
export async function addGroupRecipients(
  deps: AppDeps,
  userId: number,
  input: { unsubscribe_groups_id: number; email_address: string },
  schemaFailures: FieldErrors,
): Promise<number[]> {
  const { db } = deps.database;
  const rules = new Rules(schemaFailures);
  await rules.check('unsubscribe_groups_id', input.unsubscribe_groups_id, async (id) =>
    (await findUnsubscribeGroup(db, userId, id)) ? null : messages.invalid('unsubscribe_groups_id'),
  );
  const emails = checkEmailList(rules, input.email_address);
  rules.done();
  return addToList(deps, userId, input.unsubscribe_groups_id, emails);
}

/** Deletes one entry of the account's global list or groups; RNF when there is none. */
export async function deleteUnsubscriber(deps: AppDeps, userId: number, rawId: unknown, list: UnsubscribeList): Promise<void> {
  const id = toId(rawId);
  if (!id || (await deleteUnsubscribers(deps.database.db, userId, [id], list)) === 0) throw new NotFound(RNF);
}

/** Deletes the account's entries among `ids` (others are ignored, as for contacts); RNF when none was. */
export async function bulkDeleteUnsubscribers(deps: AppDeps, userId: number, ids: number[], list: UnsubscribeList): Promise<number> {
  const n = await deleteUnsubscribers(deps.database.db, userId, [...new Set(ids)], list);
  if (n === 0) throw new NotFound(RNF);
  return n;
}

/**
 * Unsubscribes one address at `opts.now`: globally (`groupId` null) or from a group of the account
 * (see `unsubscribeAddress`). Returns true when the address was not on that list yet. Throws
 * ValidationError for a malformed address and NotFound for a group of another account.
 */
export async function unsubscribeEmail(
  db: Db,
  userId: number,
  email: string,
  groupId: GroupKey,
  opts: { now: Date; contactId?: number | null },
): Promise<boolean> {
  const address = email.trim();
  if (!isEmail(address)) throw new ValidationError({ email_address: [messages.email('email_address')] });
  if (groupId !== null && !(await findGroupAnyState(db, userId, groupId))) throw new NotFound(RNF);
  const event = { type: 'unsubscribe' as const, address: { user_id: userId, email: address, email_key: address.toLowerCase() }, groupId };
  const [added] = await applyAddressEvents(db, [{ ...event, contactId: opts.contactId }], opts.now);
  return added;
}
