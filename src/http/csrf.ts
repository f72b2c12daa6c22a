import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

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

/**
 * Whether a request was sent by a page of another site: `Sec-Fetch-Site: cross-site`, or an
 * `Origin` that is not the service's own (that of `publicUrl`, or the one the request was sent
 * to, for a service reached by another name than its public one). Programs send neither header,
 * and pass.
 */
export function fromAnotherSite(request: FastifyRequest, publicUrl: string): boolean {
  if (request.headers['sec-fetch-site'] === 'cross-site') return true;
  const origin = request.headers.origin;
  if (origin === undefined) return false;
  return origin !== new URL(publicUrl).origin && origin !== `${request.protocol}://${request.host}`;
}
