import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../http/errors.js';

/** The shortest password a person may set. */
export const MIN_PASSWORD = 12;
/** The longest: bounds the work of a hash whatever a client sends. */
export const MAX_PASSWORD = 1024;

/**
 * scrypt with N = 2^15, r = 8, p = 3: 32 MiB of memory and about a fifth of a second per hash on
 * one core, one of the settings OWASP's password storage guidance gives for scrypt. The parameters
 * are stored with each hash (`$scrypt$ln=15,r=8,p=3$<salt>$<hash>`), so they can be raised later
 * without breaking the hashes made before.
 */
const PARAMS = { ln: 15, r: 8, p: 3 };
const KEY_LENGTH = 32;
const FORMAT = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9_-]{16,64})\$([A-Za-z0-9_-]{40,90})$/;

/**
 * At most two hashes run at once (they take libuv's threads, which file and DNS work share) and at
 * most 32 wait; a hash beyond that is refused with a 429 at once. Anonymous sign-in requests run a
 * hash each, so without this bound a flood of them would queue without end and starve the rest of
 * the service of those threads and of memory (32 MiB per running hash).
 */
export const HASHES_AT_ONCE = 2;
export const HASHES_WAITING = 32;
export const TOO_MANY_HASHES = 'Too many sign-in attempts at once: try again in a moment.';
let running = 0;
const waiting: Array<() => void> = [];

async function derive(password: string, salt: Buffer, ln: number, r: number, p: number, length: number): Promise<Buffer> {
  if (running >= HASHES_AT_ONCE) {
    if (waiting.length >= HASHES_WAITING) throw new AppError(429, TOO_MANY_HASHES, { 'retry-after': '1' });
    await new Promise<void>((resolve) => waiting.push(resolve));
  } else running++;
  try {
    const N = 2 ** ln;
    return await new Promise((resolve, reject) =>
      scrypt(password, salt, length, { N, r, p, maxmem: 256 * N * r }, (err, key) => (err ? reject(err) : resolve(key))),
    );
  } finally {
    // Hand the slot straight to the next waiter, or free it.
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

/** A new hash of `password` (random salt, the current parameters). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS.ln, PARAMS.r, PARAMS.p, KEY_LENGTH);
  return `$scrypt$ln=${PARAMS.ln},r=${PARAMS.r},p=${PARAMS.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** A hash of a random password, made once: checked against when there is no person, so that costs the same. */
let dummy: Promise<string> | null = null;

/**
 * Whether `password` matches `stored`, compared in constant time. Without a stored hash (an unknown
 * address, a person who never set a password) a hash is still computed, against one no password
 * matches, so the answer takes as long either way.
 */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const m = stored ? FORMAT.exec(stored) : null;
  if (!m) {
    dummy ??= hashPassword(randomBytes(32).toString('base64url'));
    await verifyPassword(password, await dummy);
    return false;
  }
  const [ln, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // Parameters read back from the database are bounded, so a damaged row cannot make one check huge.
  if (ln < 10 || ln > 20 || r < 1 || r > 16 || p < 1 || p > 16) return false;
  const expected = Buffer.from(m[5], 'base64url');
  const key = await derive(password, Buffer.from(m[4], 'base64url'), ln, r, p, expected.length);
  return timingSafeEqual(key, expected);
}
