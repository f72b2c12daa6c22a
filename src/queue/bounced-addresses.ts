/**
 * The account's suppressed addresses (`bounced_addresses`) and the soft-bounce history behind the
 * soft threshold: what a bounce or complaint does to an address, whether or not it names a
 * message. Run in the caller's transaction, so an event's effects are stored together.
 */
import type { Db } from '../db/index.js';
import { lockAccountAddress } from '../db/dialect.js';
import type { SuppressionReason } from '../db/types.js';
import { isoMicros } from '../util/time.js';

/** Soft bounces of one address within SOFT_WINDOW_MS that suppress it. */
export const SOFT_THRESHOLD = 3;
/** The window of the soft threshold: 30 days. */
export const SOFT_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;

/** An address of an account, as reported (`email`) and as compared (`email_key`, lower case). */
export interface AccountAddress {
  user_id: number;
  email: string;
  email_key: string;
}

/**
 * Puts the address on the account's suppression list with its reason and detail; an address
 * already there keeps its first reason. Returns whether it was added.
 */
export async function suppressAddress(
  trx: Db,
  address: AccountAddress,
  reason: SuppressionReason,
  detail: string | null,
  now: Date,
): Promise<boolean> {
  const r = await trx
    .insertInto('bounced_addresses')
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
 * Records one soft bounce of the address (of message `mailMessageId`, or of none) and suppresses
 * the address once it has SOFT_THRESHOLD soft bounces within SOFT_WINDOW_MS up to `now`. The
 * address is locked first (`lockAccountAddress`), so two concurrent bounces count one after the
 * other. Returns whether this bounce suppressed it.
 */
export async function recordSoftBounce(
  trx: Db,
  address: AccountAddress,
  mailMessageId: number | null,
  detail: string | null,
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
    .where('bounced_at', '>', isoMicros(new Date(now.getTime() - SOFT_WINDOW_MS)))
    .where('bounced_at', '<=', at)
    .executeTakeFirst();
  if (Number(row?.n ?? 0) < SOFT_THRESHOLD) return false;
  return suppressAddress(trx, address, 'soft_bounces', detail, now);
}
