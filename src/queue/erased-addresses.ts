/**
 * Erased addresses: an account that erased an address keeps only a keyed hash of it, so the queue
 * can refuse to mail it again without the address being stored in clear (docs/privacy.md).
 */
import { createHmac } from 'node:crypto';

/** The hash key of each app secret, derived once: HMAC-SHA256(secret, 'erasure'). */
const keys = new Map<string, Buffer>();

/**
 * The keyed hash of an address (hex HMAC-SHA256 of the trimmed, lower-case address), keyed from
 * the app secret: the same address gives the same hash for every account of this installation,
 * and no one without the secret can test guesses against it.
 */
export function erasureHash(appSecret: string, email: string): string {
  let key = keys.get(appSecret);
  if (!key) {
    key = createHmac('sha256', appSecret).update('erasure').digest();
    keys.set(appSecret, key);
  }
  return createHmac('sha256', key).update(email.trim().toLowerCase()).digest('hex');
}
