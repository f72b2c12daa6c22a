import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signed tokens for links that act without API keys (sender verification, open tracking,
 * unsubscribe). A token is `<body>.<mac>`: body = base64url JSON `[payload, expiresAt]` (epoch
 * seconds, 0 = never), mac = HMAC-SHA256(appSecret, purpose NUL body). The purpose is signed
 * but not carried, so a token made for one purpose is worthless for another; the payload is
 * readable (not encrypted), so put ids in it, not secrets.
 */
export interface Tokens {
  /** A token for `purpose` carrying `payload` (any JSON value), optionally expiring. */
  sign(purpose: string, payload: unknown, opts?: { expiresInSeconds?: number; now?: Date }): string;
  /** The payload of a genuine, unexpired token for `purpose`; null for anything else. */
  verify<T = unknown>(purpose: string, token: unknown, opts?: { now?: Date }): T | null;
}

const PART = /^[A-Za-z0-9_-]+$/;
/** Longer tokens are refused before any work (a URL carries a handful of ids). */
const MAX_TOKEN = 2048;

function mac(secret: string, purpose: string, body: string): Buffer {
  return createHmac('sha256', secret).update(purpose).update('\0').update(body).digest();
}

/** Sign and verify tokens with the service's `APP_SECRET`. */
export function createTokens(secret: string): Tokens {
  if (!secret) throw new Error('createTokens: an app secret is required');
  return {
    sign(purpose, payload, opts = {}) {
      const now = Math.floor((opts.now ?? new Date()).getTime() / 1000);
      const expiresAt = opts.expiresInSeconds === undefined ? 0 : now + opts.expiresInSeconds;
      const body = Buffer.from(JSON.stringify([payload, expiresAt])).toString('base64url');
      return `${body}.${mac(secret, purpose, body).toString('base64url')}`;
    },
    verify<T>(purpose: string, token: unknown, opts: { now?: Date } = {}): T | null {
      if (typeof token !== 'string' || token.length > MAX_TOKEN) return null;
      const [body, given, extra] = token.split('.');
      if (extra !== undefined || !body || !given || !PART.test(body) || !PART.test(given)) return null;
      // Compared as text, so a variant spelling of the same bytes (base64's spare bits) fails too;
      // in constant time, and only over equal lengths (timingSafeEqual throws otherwise).
      const expected = Buffer.from(mac(secret, purpose, body).toString('base64url'));
      const actual = Buffer.from(given);
      if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return null;
      try {
        const [payload, expiresAt] = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as [T, number];
        const now = Math.floor((opts.now ?? new Date()).getTime() / 1000);
        if (typeof expiresAt !== 'number' || (expiresAt !== 0 && now >= expiresAt)) return null;
        return payload;
      } catch {
        return null;
      }
    },
  };
}
