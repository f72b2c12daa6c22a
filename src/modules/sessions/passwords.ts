import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

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

function derive(password: string, salt: Buffer, ln: number, r: number, p: number, length: number): Promise<Buffer> {
  const N = 2 ** ln;
  return new Promise((resolve, reject) =>
    scrypt(password, salt, length, { N, r, p, maxmem: 256 * N * r }, (err, key) => (err ? reject(err) : resolve(key))),
  );
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
