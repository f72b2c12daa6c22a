/**
 * The caps on the confirmation mails of sign-up forms (docs/forms.md): a form must not be a way to
 * flood one mailbox, one domain or the account's own sending reputation. Each sign-up that takes a
 * mail leaves a row in `signup_log`, and the caps count those rows, so several processes share them.
 */
import { createHmac } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import type { Db } from '../../db/index.js';
import { isoMicros } from '../../util/time.js';

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

/** At most `max` sign-ups that took a mail within `windowMs`, counted per the key each names. */
export const CAPS = {
  /** Per form, from one client (an IPv4 address, or an IPv6 /64 network). */
  client: { max: 5, windowMs: HOUR_MS },
  /** Per account, to one address, its `+tag` sub-addresses counted as the address. */
  address: { max: 5, windowMs: DAY_MS },
  /** Per form, to one recipient domain. */
  domain: { max: 50, windowMs: HOUR_MS },
  /** Per form, all sign-ups. */
  form: { max: 200, windowMs: HOUR_MS },
} as const;
export type Cap = keyof typeof CAPS;

/** The same address posted to the same form again within this time takes no mail. */
export const REPEAT_MS = HOUR_MS;

/** What the caps count of one sign-up. */
export interface SignupKeys {
  userId: number;
  formId: number;
  addressHash: string;
  domain: string;
  client: string;
}

/**
 * The address as the caps count it: lower case, and `local+tag@domain` as `local@domain`, since
 * most mail services deliver every `+tag` to the same mailbox.
 */
export function addressKey(email: string): string {
  const at = email.lastIndexOf('@');
  const local = email.slice(0, at).toLowerCase();
  const plus = local.indexOf('+');
  return `${plus > 0 ? local.slice(0, plus) : local}@${email.slice(at + 1).toLowerCase()}`;
}

/**
 * The client an IP counts as: an IPv4 address itself (an IPv4-mapped IPv6 one as IPv4); an IPv6
 * address as its /64 network, since one line or host commonly holds the whole /64.
 */
export function clientKey(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  const parts = (address as ipaddr.IPv6).parts;
  return `${new ipaddr.IPv6([...parts.slice(0, 4), 0, 0, 0, 0]).toString()}/64`;
}

/** The keys of a sign-up of `email` to a form from `ip`; the address only as a keyed hash. */
export function signupKeys(appSecret: string, form: { id: number; user_id: number }, email: string, ip: string): SignupKeys {
  const key = addressKey(email);
  return {
    userId: form.user_id,
    formId: form.id,
    addressHash: createHmac('sha256', appSecret).update(`signup-cap ${key}`).digest('hex'),
    domain: key.slice(key.lastIndexOf('@') + 1),
    client: clientKey(ip),
  };
}

/** The sign-ups that `cap` counts for these keys since `since`. */
function counted(db: Db, cap: Cap, keys: SignupKeys, since: string) {
  const q = db.selectFrom('signup_log').where('created_at', '>', since);
  switch (cap) {
    case 'client':
      return q.where('form_id', '=', keys.formId).where('client', '=', keys.client);
    case 'address':
      return q.where('user_id', '=', keys.userId).where('address_hash', '=', keys.addressHash);
    case 'domain':
      return q.where('form_id', '=', keys.formId).where('domain', '=', keys.domain);
    case 'form':
      return q.where('form_id', '=', keys.formId);
  }
}

/**
 * The first cap the sign-up would go over, with the seconds until its oldest counted sign-up
 * leaves the window (when one more is allowed again); null when it is under every cap.
 */
export async function capReached(db: Db, keys: SignupKeys, now: Date): Promise<{ cap: Cap; retryAfter: number } | null> {
  for (const cap of Object.keys(CAPS) as Cap[]) {
    const { max, windowMs } = CAPS[cap];
    const row = await counted(db, cap, keys, isoMicros(new Date(now.getTime() - windowMs)))
      .select((eb) => [eb.fn.countAll<number | string>().as('n'), eb.fn.min('created_at').as('oldest')])
      .executeTakeFirst();
    if (!row || Number(row.n) < max) continue;
    const retryMs = Date.parse(String(row.oldest)) + windowMs - now.getTime();
    return { cap, retryAfter: Math.max(1, Math.ceil(retryMs / 1000)) };
  }
  return null;
}

/** Whether the address (any of its `+tag` forms) took a mail from the form within REPEAT_MS. */
export async function isRepeat(db: Db, keys: SignupKeys, now: Date): Promise<boolean> {
  const row = await db
    .selectFrom('signup_log')
    .select('id')
    .where('user_id', '=', keys.userId)
    .where('address_hash', '=', keys.addressHash)
    .where('form_id', '=', keys.formId)
    .where('created_at', '>', isoMicros(new Date(now.getTime() - REPEAT_MS)))
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Counts a sign-up against the caps, and deletes up to 100 rows older than every window, so the
 * table stays a day long without a timer.
 */
export async function logSignup(db: Db, keys: SignupKeys, now: Date): Promise<void> {
  const dayAgo = isoMicros(new Date(now.getTime() - DAY_MS));
  await db
    .deleteFrom('signup_log')
    .where('id', 'in', (eb) => eb.selectFrom('signup_log').select('id').where('created_at', '<=', dayAgo).limit(100))
    .execute();
  await db
    .insertInto('signup_log')
    .values({
      user_id: keys.userId,
      form_id: keys.formId,
      address_hash: keys.addressHash,
      domain: keys.domain,
      client: keys.client,
      created_at: isoMicros(now),
    })
    .execute();
}
