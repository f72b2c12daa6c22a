/**
 * The unsubscribe lists as the API and the public pages use them: which addresses are on them,
 * and the validated unsubscribe of one address. The rules and the storage are src/suppression/'s;
 * this file adds the HTTP-facing checks (a malformed address, another account's group). Every
 * function is scoped by account.
 */
import type { Db } from '../../db/index.js';
import { NotFound, RNF, ValidationError } from '../../http/errors.js';
import { messages } from '../../http/messages.js';
import { unsubscribedKeys, unsubscribeEntriesOf } from '../../suppression/suppression.reads.js';
import type { GroupKey } from '../../suppression/suppression.writes.js';
import { applyAddressEvents } from '../../suppression/suppression.policy.js';
import { isEmail } from '../../util/email.js';
import { findGroupAnyState } from './groups.queries.js';

/**
 * The subset of `emails` (returned as given) on the account's unsubscribe lists that stop mail
 * under `groupId`: globally unsubscribed, or (when a group is given) on that group's list.
 * Addresses compare case-insensitively. One query per 5,000 addresses.
 */
export async function suppressedEmails(db: Db, userId: number, emails: readonly string[], groupId: GroupKey = null): Promise<Set<string>> {
  const hit = await unsubscribedKeys(db, userId, [...new Set(emails.map((e) => e.trim().toLowerCase()))], groupId);
  return new Set(emails.filter((e) => hit.has(e.trim().toLowerCase())));
}

/** Whether one address is on the account's unsubscribe lists under `groupId` (see `suppressedEmails`). */
export async function isSuppressed(db: Db, userId: number, email: string, groupId: GroupKey = null): Promise<boolean> {
  return (await suppressedEmails(db, userId, [email], groupId)).size > 0;
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

/** The lists an address is on, for the preferences page: `global` and the ids of its groups. */
export async function unsubscriptionsOf(db: Db, userId: number, email: string): Promise<{ global: boolean; groupIds: number[] }> {
  const rows = await unsubscribeEntriesOf(db, userId, email.trim().toLowerCase());
  return {
    global: rows.some((r) => r.unsubscribe_groups_id === null),
    groupIds: rows.flatMap((r) => (r.unsubscribe_groups_id === null ? [] : [r.unsubscribe_groups_id])),
  };
}
