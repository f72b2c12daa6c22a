/**
 * What puts an address on, or takes it off, the lists that stop the account mailing it: the
 * unsubscribe lists (global and per group), the suppression list (hard bounces, the soft-bounce
 * threshold, complaints; its `inactive` entries are the sunset sweep's) with the soft-bounce
 * history behind it, and the keyed hash an erasure leaves. Each runs in the caller's transaction, so an event's effects are stored together. The
 * reads that honour these lists are in `suppression.reads.ts`.
 */
import { createHmac } from 'node:crypto';
import type { Db } from '../db/index.js';
import { lockAccountAddress } from '../db/dialect.js';
import type { SuppressionReason } from '../db/types.js';
import { emitEvents } from '../events/outbox.js';
import { lockSunset } from './sunset.sweep.js';
import { isoMicros } from '../util/time.js';

/** An address of an account, as reported (`email`) and as compared (`email_key`, lower case). */
export interface AccountAddress {
  user_id: number;
  email: string;
  email_key: string;
}

/** Which unsubscribe list: `null` is the account's global list, a number that group's recipients. */
export type GroupKey = number | null;

/**
 * Puts the address on the account's suppression list with its reason (`hard_bounce`,
 * `soft_bounces`, `complaint`) and detail; an address already there keeps its first reason.
 * Returns whether it was added.
 */
export async function suppressAddress(
  trx: Db,
  address: AccountAddress,
  reason: SuppressionReason,
  detail: string | null,
  now: Date,
): Promise<boolean> {
  const r = await trx
    .insertInto('suppressions')
    .values({
      user_id: address.user_id,
      email_key: address.email_key,
      email: address.email,
      reason,
      detail: detail === null ? null : detail.slice(0, 1000),
      created_at: isoMicros(now),
    })
    .onConflict((oc) => oc.columns(['user_id', 'email_key']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return r !== undefined;
}

/**
 * `suppressAddress` for several addresses in one statement (the hard bounces of one batch): each
 * goes on its account's list with its detail unless it is there already; an address named twice
 * keeps the first detail.
 */
export async function suppressAddresses(
  trx: Db,
  entries: ReadonlyArray<{ address: AccountAddress; detail: string | null }>,
  reason: SuppressionReason,
  now: Date,
): Promise<void> {
  const seen = new Set<string>();
  const rows = entries.flatMap(({ address, detail }) => {
    const key = `${address.user_id}\0${address.email_key}`;
    if (seen.has(key)) return [];
    seen.add(key);
    const row = { user_id: address.user_id, email_key: address.email_key, email: address.email, reason, created_at: isoMicros(now) };
    return [{ ...row, detail: detail === null ? null : detail.slice(0, 1000) }];
  });
  if (rows.length === 0) return;
  await trx
    .insertInto('suppressions')
    .values(rows)
    .onConflict((oc) => oc.columns(['user_id', 'email_key']).doNothing())
    .execute();
}

/**
 * Records one soft bounce of the address (of message `mailMessageId`, or of none) and suppresses
 * the address (with `reason`) once it has `threshold.count` soft bounces within
 * `threshold.windowMs` up to `now` (the policy's numbers, `suppression.policy.ts`). The address is locked first (`lockAccountAddress`), so two
 * concurrent bounces count one after the other. Returns whether this bounce suppressed it.
 */
export async function recordSoftBounce(
  trx: Db,
  address: AccountAddress,
  mailMessageId: number | null,
  detail: string | null,
  reason: SuppressionReason,
  threshold: { count: number; windowMs: number },
  now: Date,
): Promise<boolean> {
  await lockAccountAddress(trx, address.user_id, address.email_key);
  const at = isoMicros(now);
  await trx
    .insertInto('soft_bounces')
    .values({ user_id: address.user_id, email_key: address.email_key, mail_message_id: mailMessageId, bounced_at: at })
    .execute();
  const row = await trx
    .selectFrom('soft_bounces')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('user_id', '=', address.user_id)
    .where('email_key', '=', address.email_key)
    .where('bounced_at', '>', isoMicros(new Date(now.getTime() - threshold.windowMs)))
    .where('bounced_at', '<=', at)
    .executeTakeFirst();
  if (Number(row?.n ?? 0) < threshold.count) return false;
  return suppressAddress(trx, address, reason, detail, now);
}

/**
 * Lifts the suppression of one address of the account (whatever its reason), in the caller's
 * transaction: forgets its soft-bounce history (so the next soft bounce starts a new count). The
 * caller then has the messages it received so far no longer count for the sunset policy
 * (`sunsetLifted` of src/messages/). Returns whether the address was suppressed.
 */
export async function liftSuppression(trx: Db, userId: number, emailKey: string): Promise<boolean> {
  // Under the sweep's lock: a sweep that read the messages before this lift never lists the address again.
  await lockSunset(trx, userId);
  const r = await trx.deleteFrom('suppressions').where('user_id', '=', userId).where('email_key', '=', emailKey).executeTakeFirst();
  if (Number(r.numDeletedRows) === 0) return false;
  await trx.deleteFrom('soft_bounces').where('user_id', '=', userId).where('email_key', '=', emailKey).execute();
  return true;
}

// 6 values per row: far below SQLite's 32,766 and PostgreSQL's 65,535 bound parameters.
const INSERT_CHUNK = 500;

/**
 * Adds addresses (already validated) to one unsubscribe list; an address already on it (compared
 * lower-cased) is left alone. The unique indexes make that hold under concurrency too: a clash
 * inserts nothing (ON CONFLICT DO NOTHING, no target, so either partial index counts). Every way
 * onto a list (the API, the recipient's preferences page and one-click, a spam complaint) comes
 * through here: each new entry writes its `contact.unsubscribed` event in the same transaction
 * (data: `email`, `scope` `global` or the group id, and `contact_id` when the unsubscribe came
 * through a message sent to a contact, `opts.contactId`). Returns each address's entry id, in
 * input order, and how many entries were new.
 */
export async function insertUnsubscribers(
  db: Db,
  userId: number,
  groupId: GroupKey,
  emails: string[],
  opts: { now: Date; contactId?: number | null },
): Promise<{ ids: number[]; added: number }> {
  const ids: number[] = [];
  let added = 0;
  const now = isoMicros(opts.now);
  for (let i = 0; i < emails.length; i += INSERT_CHUNK) {
    const chunk = emails.slice(i, i + INSERT_CHUNK);
    const keys = chunk.map((e) => e.toLowerCase());
    const rows = chunk.map((email, j) => ({
      user_id: userId,
      unsubscribe_groups_id: groupId,
      email_address: email,
      email_key: keys[j],
      created_at: now,
      updated_at: now,
    }));
    const inserted = await db
      .insertInto('unsubscribers')
      .values(rows)
      .onConflict((oc) => oc.doNothing())
      .returning(['id', 'email_address'])
      .execute();
    added += inserted.length;
    await emitEvents(
      db,
      opts.now,
      inserted.map((r) => ({
        userId,
        type: 'contact.unsubscribed' as const,
        data: {
          email: r.email_address,
          scope: groupId ?? 'global',
          ...(opts.contactId == null ? {} : { contact_id: opts.contactId }),
        },
        email: r.email_address,
      })),
    );
    const found = await db
      .selectFrom('unsubscribers')
      .select(['id', 'email_key'])
      .where('user_id', '=', userId)
      .where((eb) => (groupId === null ? eb('unsubscribe_groups_id', 'is', null) : eb('unsubscribe_groups_id', '=', groupId)))
      .where('email_key', 'in', keys)
      .execute();
    const byKey = new Map(found.map((r) => [r.email_key, r.id]));
    for (const k of keys) ids.push(byKey.get(k)!);
  }
  return { ids, added };
}

/** The hash key of each app secret, derived once: HMAC-SHA256(secret, 'erasure'). */
const erasureKeys = new Map<string, Buffer>();

/**
 * The keyed hash an erasure keeps of an address (hex HMAC-SHA256 of the trimmed, lower-case
 * address), keyed from the app secret: the same address gives the same hash for every account of
 * this installation, and no one without the secret can test guesses against it. The batch check
 * (`skipsAmong`) compares claimed addresses' hashes with `erased_addresses`.
 */
export function erasureHash(appSecret: string, email: string): string {
  let key = erasureKeys.get(appSecret);
  if (!key) {
    key = createHmac('sha256', appSecret).update('erasure').digest();
    erasureKeys.set(appSecret, key);
  }
  return createHmac('sha256', key).update(email.trim().toLowerCase()).digest('hex');
}

/** Keeps the keyed hash of an erased address (`erasureHash`) for the account; a hash kept already stays. */
export async function insertErasedHash(db: Db, userId: number, hash: string, now: Date): Promise<void> {
  await db
    .insertInto('erased_addresses')
    .values({ user_id: userId, hash, created_at: isoMicros(now) })
    .onConflict((oc) => oc.columns(['user_id', 'hash']).doNothing())
    .execute();
}
