/**
 * What an event does to an address, in one table (as listmonk's `BounceActions`): which list it
 * puts the address on, and after how many such events. Every producer hands its events here: the
 * ledger (a message's bounce or complaint), intake (a complaint's unsubscribe, reports that name
 * only an address), the preferences page and one-click unsubscribe, the API's unsubscribe lists,
 * an erasure. Nothing else suppresses or unsubscribes; `suppression.writes.ts` is the storage.
 */
import type { Db } from '../db/index.js';
import type { SuppressionReason } from '../db/types.js';
import { isEmail } from '../util/email.js';
import {
  insertErasedHash,
  insertUnsubscribers,
  recordSoftBounce,
  suppressAddresses,
  type AccountAddress,
  type GroupKey,
} from './suppression.writes.js';

/** Soft bounces of one address within SOFT_WINDOW_MS that suppress it. */
export const SOFT_THRESHOLD = 3;
/** The window of the soft threshold: 30 days. */
export const SOFT_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;

/** What an event does to its address. */
export interface AddressAction {
  /** The suppression list's reason it puts the address on (null: none). */
  suppress: SuppressionReason | null;
  /** Only once the address has `count` such events within `windowMs` (its history is kept meanwhile). */
  threshold?: { count: number; windowMs: number };
  /** The unsubscribe list it puts the address on: the global one, or the one the recipient chose. */
  unsubscribe: 'global' | 'chosen' | null;
  /** Keeps the keyed hash of the address, which stops every kind of mail to it in the account. */
  erase?: true;
}

/** The kinds of event that change what may be sent to an address. */
export type AddressEventType = 'hard_bounce' | 'soft_bounce' | 'complaint' | 'unsubscribe' | 'inactivity' | 'erasure';

/** The policy: what each kind of event does to its address. */
export const ADDRESS_POLICY: { readonly [T in AddressEventType]: AddressAction } = {
  hard_bounce: { suppress: 'hard_bounce', unsubscribe: null },
  soft_bounce: { suppress: 'soft_bounces', threshold: { count: SOFT_THRESHOLD, windowMs: SOFT_WINDOW_MS }, unsubscribe: null },
  complaint: { suppress: 'complaint', unsubscribe: 'global' },
  unsubscribe: { suppress: null, unsubscribe: 'chosen' },
  // Applied to a whole account at once by the sunset sweep (`sunset.sweep.ts`), which also takes it back.
  inactivity: { suppress: 'inactive', unsubscribe: null },
  erasure: { suppress: null, unsubscribe: null, erase: true },
};

/** One event about an address, as a producer hands it in. */
export type AddressEvent =
  | {
      type: 'hard_bounce' | 'soft_bounce' | 'complaint';
      address: AccountAddress;
      /** The server's words or the provider's description, kept as the suppression's detail. */
      detail: string | null;
      /** The message it happened to (its soft-bounce history names it), when one. */
      messageId?: number | null;
      /** The contact the message went to (its `contact.unsubscribed` event names it), when one. */
      contactId?: number | null;
    }
  | { type: 'unsubscribe'; address: AccountAddress; groupId: GroupKey; contactId?: number | null }
  | { type: 'erasure'; userId: number; hash: string };

/**
 * Applies `events` in order, in the caller's transaction, at `now`; `part` limits it to the
 * events' suppressions or to their unsubscribes (the ledger suppresses a message's complainer as it
 * counts the complaint; intake unsubscribes it after). Consecutive plain suppressions go in one
 * statement (an address already suppressed keeps its first reason). Returns, per event, whether it
 * put its address on an unsubscribe list it was not on yet.
 */
export async function applyAddressEvents(
  trx: Db,
  events: readonly AddressEvent[],
  now: Date,
  part: 'all' | 'suppress' | 'unsubscribe' = 'all',
): Promise<boolean[]> {
  const added = events.map(() => false);
  let pending: Array<{ address: AccountAddress; detail: string | null; reason: SuppressionReason }> = [];
  const flush = async () => {
    for (const reason of new Set(pending.map((p) => p.reason)))
      await suppressAddresses(
        trx,
        pending.filter((p) => p.reason === reason),
        reason,
        now,
      );
    pending = [];
  };
  for (const [i, event] of events.entries()) {
    const action = ADDRESS_POLICY[event.type];
    if (event.type === 'erasure') {
      await flush();
      await insertErasedHash(trx, event.userId, event.hash, now);
      continue;
    }
    if (part !== 'unsubscribe' && action.suppress && 'detail' in event) {
      if (action.threshold) {
        await flush();
        await recordSoftBounce(trx, event.address, event.messageId ?? null, event.detail, action.suppress, action.threshold, now);
      } else pending.push({ address: event.address, detail: event.detail, reason: action.suppress });
    }
    const email = event.address.email.trim();
    if (part !== 'suppress' && action.unsubscribe && isEmail(email)) {
      await flush();
      const groupId = action.unsubscribe === 'chosen' && 'groupId' in event ? event.groupId : null;
      const r = await insertUnsubscribers(trx, event.address.user_id, groupId, [email], { now, contactId: event.contactId });
      added[i] = r.added > 0;
    }
  }
  await flush();
  return added;
}

/**
 * Puts addresses (already validated) on one unsubscribe list of the account, as the API's lists
 * do: the `unsubscribe` of the policy for many addresses at once. Returns each address's entry id,
 * in input order, and how many were new.
 */
export function unsubscribeAddresses(
  trx: Db,
  userId: number,
  groupId: GroupKey,
  emails: string[],
  now: Date,
): Promise<{ ids: number[]; added: number }> {
  return insertUnsubscribers(trx, userId, groupId, emails, { now });
}
