/**
 * What the delivery engine and the public unsubscribe pages use: suppression checks and the
 * unsubscribe itself. Every function is scoped by account.
 */
import type { Db } from '../../db/index.js';
import { NotFound, RNF, ValidationError } from '../../http/errors.js';
import { messages } from '../../http/messages.js';
import { findGroupAnyState } from './groups.queries.js';
import { entriesOfEmail, findSuppressedKeys, insertUnsubscribers, suppressedKeys, type GroupKey } from './unsubscribes.queries.js';
import { isEmail } from '../../util/email.js';

export { suppressedKeys };

// Keeps one query's IN list well below both engines' bound-parameter limits.
const QUERY_CHUNK = 5_000;

/**
 * The subset of `emails` (returned as given) that must not be mailed by the account under
 * `groupId`: globally unsubscribed, or (when a group is given) on that group's list. Addresses
 * compare case-insensitively. One query per batch (per 5,000 addresses for larger batches).
 */
export async function suppressedEmails(db: Db, userId: number, emails: readonly string[], groupId: GroupKey = null): Promise<Set<string>> {
  const keys = [...new Set(emails.map((e) => e.trim().toLowerCase()))];
  const hit = new Set<string>();
  for (let i = 0; i < keys.length; i += QUERY_CHUNK) {
    for (const k of await findSuppressedKeys(db, userId, keys.slice(i, i + QUERY_CHUNK), groupId)) hit.add(k);
  }
  return new Set(emails.filter((e) => hit.has(e.trim().toLowerCase())));
}

/** Whether one address is suppressed for the account under `groupId` (see `suppressedEmails`). */
export async function isSuppressed(db: Db, userId: number, email: string, groupId: GroupKey = null): Promise<boolean> {
  return (await suppressedEmails(db, userId, [email], groupId)).size > 0;
}

/**
 * Unsubscribes one address at `opts.now`: globally (`groupId` null) or from a group of the account.
 * A deleted group is still accepted, since sends made under it may still be delivering. Returns
 * true when the address was not on that list yet (a "first unsubscribe", counted once in the
 * statistics, and announced by a `contact.unsubscribed` event naming `opts.contactId` when given).
 * Throws ValidationError for a malformed address and NotFound for a group of another account.
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
  const { added } = await insertUnsubscribers(db, userId, groupId, [address], opts);
  return added > 0;
}

/** The lists an address is on, for the preferences page: `global` and the ids of its groups. */
export async function unsubscriptionsOf(db: Db, userId: number, email: string): Promise<{ global: boolean; groupIds: number[] }> {
  const rows = await entriesOfEmail(db, userId, email.trim().toLowerCase());
  return {
    global: rows.some((r) => r.unsubscribe_groups_id === null),
    groupIds: rows.flatMap((r) => (r.unsubscribe_groups_id === null ? [] : [r.unsubscribe_groups_id])),
  };
}
