import * as crypto from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from './errors.js';
import type { Database } from '../db/index.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated account's id; every query is scoped by it. */
    userId: number;
  }
  interface FastifyContextConfig {
    /** Unauthenticated route (tracking pixel, public pages, health). */
    public?: boolean;
  }
}

/** SHA-256 of a secret key. Keys are 256-bit random, so a fast hash is the right tool. */
export function hashSecret(secret: string): string {
  return oneShotHash ? oneShotHash('sha256', secret) : crypto.createHash('sha256').update(secret).digest('hex');
}

// `crypto.hash` (Node ≥ 20.12; engines allows any 20) is about four times faster than createHash
// for one short input.
const oneShotHash = (crypto as { hash?: (algorithm: string, data: string) => string }).hash;

/** A new key pair: `pk_…` and `sk_…`, each 32 random bytes in base64url. */
export function newKeyPair(): { publicKey: string; secretKey: string } {
  return { publicKey: 'pk_' + crypto.randomBytes(24).toString('base64url'), secretKey: 'sk_' + crypto.randomBytes(32).toString('base64url') };
}

const INVALID = 'Invalid API credentials';
const MAX_VERIFIED = 10_000;

type KeyRow = { id: number; secret_hash: string; disabled: number };

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s && s.trim() !== '' ? s.trim() : undefined;
}

/** Checks `PublicKey`/`SecretKey` on every non-public route and sets `request.userId` (contract §3). */
export function registerAuth(app: FastifyInstance, database: Database): void {
  const { db } = database;
  app.decorateRequest('userId', 0);
  // Built and compiled once: this runs on every request, and building + compiling a Kysely query
  // costs more than the indexed lookup itself. Only the parameter changes.
  const lookup = db.selectFrom('accounts').select(['id', 'secret_hash', 'disabled']).where('public_key', '=', '').compile();

  // The last secret verified for each public key, while the accounts stay unchanged: a repeat call
  // skips the lookup and the hash and compares the secret itself in constant time. Any change to
  // the accounts (a rotation, a disabled account, by this process or another) bumps
  // `database.version`, so a stale entry is not used; without a version nothing is kept.
  const verified = new Map<string, { id: number; secret: Buffer; version: number }>();

  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config?.public || !request.routeOptions.url) return;
    const publicKey = header(request, 'publickey');
    const secretKey = header(request, 'secretkey');
    if (!publicKey || !secretKey) {
      const errors: Record<string, string[]> = {};
      if (!publicKey) errors.PublicKey = ['The public key field is required.'];
      if (!secretKey) errors.SecretKey = ['The secret key field is required.'];
      throw new AppError(401, errors);
    }
    const version = database.version?.();
    const known = version === undefined ? undefined : verified.get(publicKey);
    if (known && known.version === version) {
      const given = Buffer.from(secretKey);
      if (given.length === known.secret.length && crypto.timingSafeEqual(given, known.secret)) {
        request.userId = known.id;
        return;
      }
    }
    const [account] = await database.read<KeyRow>({ ...lookup, parameters: [publicKey] });
    const given = Buffer.from(hashSecret(secretKey), 'latin1');
    const stored = Buffer.from(account?.secret_hash ?? '0'.repeat(64), 'latin1');
    const match = given.length === stored.length && crypto.timingSafeEqual(given, stored);
    if (!account || !match || account.disabled) throw new AppError(401, INVALID);
    request.userId = account.id;
    if (version !== undefined) {
      if (verified.size >= MAX_VERIFIED) verified.delete(verified.keys().next().value!);
      verified.set(publicKey, { id: account.id, secret: Buffer.from(secretKey), version });
    }
  });
}
