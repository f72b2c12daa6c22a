import { randomBytes } from 'node:crypto';

/**
 * Tokens that stand for a row (a session, an invitation, a reset link): `<id>.<secret>`, where the
 * secret is 256 random bits in base64url and the row keeps only its SHA-256 hash (`hashSecret`).
 * The id finds the row; the hashes are then compared in constant time (`sameHash`), as for keys.
 */
const TOKEN = /^([1-9]\d{0,9})\.([A-Za-z0-9_-]{43})$/;

/** A new secret: 32 random bytes, base64url (43 characters). */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** The token of row `id` with `secret`. */
export function joinToken(id: number, secret: string): string {
  return `${id}.${secret}`;
}

/** The row id and secret of a well-formed token; null for anything else. */
export function splitToken(token: unknown): { id: number; secret: string } | null {
  if (typeof token !== 'string' || token.length > 60) return null;
  const m = TOKEN.exec(token);
  return m ? { id: Number(m[1]), secret: m[2] } : null;
}
