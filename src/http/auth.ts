import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from './errors.js';
import type { Database } from '../db/index.js';
import { hashSecret, sameHash } from '../util/secrets.js';

/** What authentication needs of an account, found by its public key. */
export interface KeyedAccount {
  id: number;
  secret_hash: string;
  disabled: number;
}

/** Finds the account of a public key (the accounts module's lookup, handed over by `app.ts`). */
export type FindAccount = (publicKey: string) => Promise<KeyedAccount | undefined>;

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated account's id; every query is scoped by it. */
    userId: number;
  }
  interface FastifyContextConfig {
    /** Unauthenticated route (tracking pixel, public pages, health, metrics); also not rate-limited. */
    public?: boolean;
  }
}

const INVALID = 'Invalid API credentials';
const MAX_VERIFIED = 10_000;
/** Compared with the hash of any secret when the public key is unknown, so both cases cost the same. */
const NO_HASH = '0'.repeat(64);

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s && s.trim() !== '' ? s.trim() : undefined;
}

/**
 * Checks the `PublicKey` and `SecretKey` headers on every non-public route and sets
 * `request.userId`. A missing header is a 401 naming it; a wrong pair, an unknown key or a
 * disabled account is one 401 text for all, so a caller cannot tell which part was wrong.
 */
export function registerAuth(app: FastifyInstance, database: Database, findAccount: FindAccount): void {
  app.decorateRequest('userId', 0);

  // The secret hash last verified for each public key, while the accounts stay unchanged: a repeat
  // call skips the lookup and compares the hash of the given secret with it in constant time. Only
  // the hash is kept (what the database holds anyway), never the secret. Any change to the accounts
  // (a rotation, a disabled account, by this process or another) bumps `database.version`, so a
  // stale entry is not used; without a version nothing is kept.
  const verified = new Map<string, { id: number; hash: string; version: number }>();

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
    const given = hashSecret(secretKey);
    const version = database.version?.();
    const known = version === undefined ? undefined : verified.get(publicKey);
    if (known && known.version === version && sameHash(given, known.hash)) {
      request.userId = known.id;
      return;
    }
    const account = await findAccount(publicKey);
    const match = sameHash(given, account?.secret_hash ?? NO_HASH);
    if (!account || !match || account.disabled) throw new AppError(401, INVALID);
    request.userId = account.id;
    if (version !== undefined) {
      if (verified.size >= MAX_VERIFIED) verified.delete(verified.keys().next().value!);
      verified.set(publicKey, { id: account.id, hash: account.secret_hash, version });
    }
  });
}
