/**
 * What failed password checks hold back (sign-ins, and a person's own `/me/password` and
 * `/me/2fa/disable`, which count alike). Failures are kept per address and client address, so one
 * client's guesses lock that client out, never the person, who may be elsewhere:
 *
 * - 10 failures for one email from one client address within 15 minutes lock that email for that
 *   client address, for 15 minutes after the tenth (nothing is counted while it is locked);
 * - 10 failures for one email from anywhere within 15 minutes slow that email down for everyone
 *   who is not locked: one attempt every 5 seconds after the latest failure. Many client addresses
 *   guessing together get that far and no further; the person waits seconds, not minutes.
 */
import type { Db } from '../../db/index.js';
import { AppError } from '../../http/errors.js';
import { failuresSince, insertFailure, latestFailures } from './sessions.queries.js';

/** Failed checks of one address that lock it (from one client address) or slow it (from all)… */
export const MAX_FAILURES = 10;
/** …when they fall within this window; a lock lasts this long after the last of them. */
export const FAILURE_WINDOW_MS = 15 * 60 * 1000;
/** Once an address is slowed, one attempt this long after its latest failure. */
export const SLOW_EVERY_MS = 5_000;

/** The text of a 429 for an address held back, waiting `seconds`. */
function heldBack(seconds: number): AppError {
  const wait = seconds >= 60 ? `${Math.ceil(seconds / 60)} minutes` : `${seconds} seconds`;
  return new AppError(429, `Too many failed sign-ins for this email: retry in ${wait}.`, { 'Retry-After': String(seconds) });
}

const secondsUntil = (until: number, now: Date) => Math.max(1, Math.ceil((until - now.getTime()) / 1000));

/**
 * Refuses (429 with `Retry-After`) a password check for `emailKey` from `ip` while that client is
 * locked out of it, or while the address is slowed and its latest failure is too recent.
 */
export async function refuseWhileHeldBack(db: Db, emailKey: string, ip: string, now: Date): Promise<void> {
  const own = await latestFailures(db, emailKey, ip, MAX_FAILURES);
  if (own.length === MAX_FAILURES) {
    const newest = Date.parse(own[0]);
    const lockedUntil = newest + FAILURE_WINDOW_MS;
    if (newest - Date.parse(own[MAX_FAILURES - 1]) <= FAILURE_WINDOW_MS && now.getTime() < lockedUntil)
      throw heldBack(secondsUntil(lockedUntil, now));
  }
  const all = await failuresSince(db, emailKey, new Date(now.getTime() - FAILURE_WINDOW_MS));
  if (all.count >= MAX_FAILURES && all.latest) {
    const next = Date.parse(all.latest) + SLOW_EVERY_MS;
    if (now.getTime() < next) throw heldBack(secondsUntil(next, now));
  }
}

/** Counts a failed password check for `emailKey` from `ip`. */
export function countFailure(db: Db, emailKey: string, ip: string, now: Date): Promise<void> {
  return insertFailure(db, emailKey, ip, now);
}
