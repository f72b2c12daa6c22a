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
 * most 32 wait; a hash beyond that is refused with a 429 at once. Without this bound a flood of
 * sign-ins would queue without end and starve the rest of the service of those threads and of
 * memory (32 MiB per running hash). Only a person's own hash takes a slot: a sign-in for an address
 * that has no password waits as long instead, without one (`verifyPassword`), so a flood of made-up
 * addresses never fills the gate a real person needs.
 */
export const HASHES_AT_ONCE = 2;
export const HASHES_WAITING = 32;
/** Password checks of one client address at once (any address it names), before any gate. */
export const CHECKS_PER_CLIENT = 4;
export const TOO_MANY_HASHES = 'Too many sign-in attempts at once: try again in a moment.';
let running = 0;
const waiting: Array<() => void> = [];
/** How long a hash takes here, lately (a moving average of the running time, without the wait). */
let typicalMs: number | null = null;

async function derive(password: string, salt: Buffer, ln: number, r: number, p: number, length: number): Promise<Buffer> {
  if (running >= HASHES_AT_ONCE) {
    if (waiting.length >= HASHES_WAITING) throw new AppError(429, TOO_MANY_HASHES, { 'retry-after': '1' });
    await new Promise<void>((resolve) => waiting.push(resolve));
  } else running++;
  const started = performance.now();
  try {
    const N = 2 ** ln;
    return await new Promise((resolve, reject) =>
      scrypt(password, salt, length, { N, r, p, maxmem: 256 * N * r }, (err, key) => (err ? reject(err) : resolve(key))),
    );
  } finally {
    if (ln === PARAMS.ln && r === PARAMS.r && p === PARAMS.p) {
      const took = performance.now() - started;
      typicalMs = typicalMs === null ? took : typicalMs * 0.8 + took * 0.2;
    }
    // Hand the slot straight to the next waiter, or free it.
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

const checksOf = new Map<string, number>();

/**
 * Runs a password check of the client at `ip`, at most CHECKS_PER_CLIENT of them at once: one
 * client cannot fill the gate alone (429 at once beyond that, whatever address it names).
 */
export async function checkForClient<T>(ip: string | null, check: () => Promise<T>): Promise<T> {
  const client = ip ?? '';
  const now = checksOf.get(client) ?? 0;
  if (now >= CHECKS_PER_CLIENT) throw new AppError(429, TOO_MANY_HASHES, { 'retry-after': '1' });
  checksOf.set(client, now + 1);
  try {
    return await check();
  } finally {
    const left = checksOf.get(client)! - 1;
    if (left === 0) checksOf.delete(client);
    else checksOf.set(client, left);
  }
}

/** A new hash of `password` (random salt, the current parameters). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS.ln, PARAMS.r, PARAMS.p, KEY_LENGTH);
  return `$scrypt$ln=${PARAMS.ln},r=${PARAMS.r},p=${PARAMS.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** The first hash of a process, of a random password, which gives `typicalMs` its first value. */
let calibration: Promise<string> | null = null;

/**
 * As long as a hash takes lately, give or take a tenth, without running one: what checking a
 * password against no hash costs, so an unknown address answers after the same time as a wrong
 * password, but takes no slot of the gate.
 */
async function waitAsLongAsAHash(): Promise<void> {
  // A full gate refuses the first hash too; the settings' documented cost stands in until one runs.
  if (typicalMs === null) await (calibration ??= hashPassword(randomBytes(32).toString('base64url')).catch(() => ''));
  await new Promise((resolve) => setTimeout(resolve, (typicalMs ?? 200) * (0.9 + Math.random() * 0.2)));
}

/**
 * Whether `password` matches `stored`, compared in constant time. Without a stored hash (an unknown
 * address, a person who never set a password) nothing is hashed, but the answer waits as long as
 * a hash takes, so it comes after the same time either way.
 */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const m = stored ? FORMAT.exec(stored) : null;
  if (!m) {
    await waitAsLongAsAHash();
    return false;
  }
  const [ln, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // Parameters read back from the database are bounded, so a damaged row cannot make one check huge.
  if (ln < 10 || ln > 20 || r < 1 || r > 16 || p < 1 || p > 16) return false;
  const expected = Buffer.from(m[5], 'base64url');
  const key = await derive(password, Buffer.from(m[4], 'base64url'), ln, r, p, expected.length);
  return timingSafeEqual(key, expected);
}
