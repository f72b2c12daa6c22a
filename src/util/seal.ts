import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/**
 * Sealed text: AES-256-GCM with a key derived from the app secret for one purpose, so what is
 * kept in the database (a two-factor secret, a queued mail that carries a one-time link) is of no
 * use to someone who reads the database without the app secret. The purpose is also the
 * authenticated data: text sealed for one purpose does not open for another.
 */
function keyFor(appSecret: string, purpose: string): Buffer {
  return createHmac('sha256', appSecret).update('seal\0').update(purpose).digest();
}

/** Seals `text` for `purpose`: base64url of IV (12 bytes), tag (16 bytes) and ciphertext. */
export function seal(appSecret: string, purpose: string, text: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(appSecret, purpose), iv);
  cipher.setAAD(Buffer.from(purpose));
  const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** The text sealed for `purpose`; null when it was not (another purpose or secret, or tampered with). */
export function unseal(appSecret: string, purpose: string, sealed: string): string | null {
  try {
    const raw = Buffer.from(sealed, 'base64url');
    if (raw.length < 28) return null;
    const decipher = createDecipheriv('aes-256-gcm', keyFor(appSecret, purpose), raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(purpose));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

/**
 * What a webhook endpoint's signing secret is sealed for: the API seals it when it makes one, and
 * only the webhook lane opens it, to sign a delivery.
 */
export const WEBHOOK_SECRET = 'webhook-secret';

/**
 * What a sending domain's DKIM private key is sealed for: the API seals it when it makes the key,
 * and the mail lane opens it to sign that domain's mail.
 */
export const DKIM_KEY = 'dkim-key';
