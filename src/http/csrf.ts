import { createHmac, timingSafeEqual } from 'node:crypto';

/** The request header that carries the CSRF token of a session. */
export const CSRF_HEADER = 'x-csrf-token';

/**
 * The CSRF token of a session: an HMAC of the session's cookie value with the app secret. It is
 * derived, not stored: only the holder of the cookie's value (the page that signed in, which got
 * the token in the answer) can know it, and another session's token never matches.
 */
export function csrfToken(appSecret: string, sessionCookie: string): string {
  return createHmac('sha256', appSecret).update('csrf\0').update(sessionCookie).digest('base64url');
}

/** Whether `given` is the CSRF token of the session, compared in constant time. */
export function validCsrf(appSecret: string, sessionCookie: string, given: unknown): boolean {
  if (typeof given !== 'string' || given.length > 100) return false;
  const expected = Buffer.from(csrfToken(appSecret, sessionCookie));
  const actual = Buffer.from(given);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
