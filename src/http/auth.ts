import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from './errors.js';
import type { Database } from '../db/index.js';
import type { Clock } from '../util/clock.js';
import { hashSecret, sameHash } from '../util/secrets.js';
import { allows, grantOf, knownScope, type Grant, type RouteScope, type Scope } from './scopes.js';

/** Who makes a request: a key of the account, or a person signed in. */
export interface Actor {
  type: 'key' | 'user';
  id: number;
  name: string;
}

/** The authenticated caller: its account (every query is scoped by it), who it is and what it may do. */
export interface Principal {
  account: number;
  actor: Actor;
  grant: Grant;
}

/** What authentication needs of a key, found by its public key. */
export interface KeyRecord {
  id: number;
  user_id: number;
  name: string;
  secret_hash: string;
  /** `full`, or a JSON array of scopes. */
  scopes: string;
  last_used_at: string | null;
  /** The account's `disabled` flag. */
  disabled: number;
}

/** How auth reads and marks keys (the keys module's queries, handed over by `app.ts`). */
export interface KeyLookup {
  /** The key with this public key, with its account's state. */
  find(publicKey: string): Promise<KeyRecord | undefined>;
  /** Sets the key's `last_used_at` to `now` unless it was set within the last minute (by any process). */
  touch(id: number, now: Date): Promise<void>;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated account's id; every query is scoped by it. */
    userId: number;
    /** Who is calling and what they may do; null on public routes. */
    principal: Principal | null;
  }
  interface FastifyInstance {
    /**
     * Forgets every credential remembered by this process, so a key revoked or changed here is
     * refused (or narrowed) on the very next request, before any change notification arrives.
     */
    forgetCredentials(): void;
  }
  interface FastifyContextConfig {
    /** Unauthenticated route (tracking pixel, public pages, health, metrics); also not rate-limited. */
    public?: boolean;
    /**
     * The scope a keyed route needs (`contacts.read`, `contacts.write`, …), or `none` for one any
     * caller may use. A keyed route that declares none is open to owners and `full` keys only.
     */
    scope?: RouteScope;
  }
}

/** The 401 text for keys present but wrong, whichever part is wrong. */
export const INVALID_CREDENTIALS = 'Invalid API credentials';
const MAX_REMEMBERED = 10_000;
/** Compared with the hash of any secret when the public key is unknown, so both cases cost the same. */
const NO_HASH = '0'.repeat(64);
/** `last_used_at` moves at most this often. */
export const LAST_USED_EVERY_MS = 60_000;

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s && s.trim() !== '' ? s.trim() : undefined;
}

/** A key's stored scopes as a grant; anything unreadable grants nothing. */
export function keyGrant(stored: string): Grant {
  if (stored === 'full') return grantOf('full');
  try {
    const list = JSON.parse(stored) as unknown;
    return grantOf(Array.isArray(list) ? list.filter((s): s is Scope => typeof s === 'string' && knownScope(s)) : []);
  } catch {
    return grantOf([]);
  }
}

/** The 403 of a caller without the route's scope. */
export function notAllowed(actor: Actor, scope: string): AppError {
  return new AppError(403, `${actor.type === 'key' ? 'This key is' : 'You are'} not allowed to ${scope}.`);
}

/**
 * Refuses a principal without the route's scope: a declared scope must be held; `none` lets any
 * caller in; a route that declares nothing is open to `full` callers only.
 */
export function enforceScope(principal: Principal, scope: RouteScope | undefined): void {
  if (scope === 'none') return;
  if (scope === undefined) {
    if (!principal.grant.full) throw notAllowed(principal.actor, 'use this route');
    return;
  }
  if (!allows(principal.grant, scope)) throw notAllowed(principal.actor, scope);
}

/** A remembered key: what the database said of it, while the credentials stay unchanged. */
interface Remembered {
  hash: string;
  principal: Principal;
  lastUsed: number;
  version: number;
}

/**
 * Checks the `PublicKey` and `SecretKey` headers on every non-public route, sets `request.userId`
 * and `request.principal`, and refuses a caller without the route's scope (403). A missing header
 * is a 401 naming it; a wrong pair, an unknown or revoked key or a disabled account is one 401 text
 * for all, so a caller cannot tell which part was wrong. A key's first request sets its
 * `last_used_at`; later ones move it at most once a minute.
 */
export function registerAuth(app: FastifyInstance, deps: { database: Database; clock: Clock }, keys: KeyLookup): void {
  const { database, clock } = deps;
  app.decorateRequest('userId', 0);
  app.decorateRequest('principal', null);

  // The key last verified for each public key, while the credentials stay unchanged: a repeat call
  // skips the lookup and compares the hash of the given secret with it in constant time. Only the
  // hash is kept (what the database holds anyway), never the secret. Any change to accounts or keys
  // (a revocation, new scopes, a disabled account, by this process or another) moves
  // `database.version`, so a stale entry is not used; without a version nothing is kept.
  const remembered = new Map<string, Remembered>();
  app.decorate('forgetCredentials', () => remembered.clear());

  async function byKey(publicKey: string, secretKey: string): Promise<Principal> {
    const given = hashSecret(secretKey);
    const version = database.version?.();
    const known = version === undefined ? undefined : remembered.get(publicKey);
    let entry: Remembered;
    if (known && known.version === version && sameHash(given, known.hash)) entry = known;
    else {
      const key = await keys.find(publicKey);
      const match = sameHash(given, key?.secret_hash ?? NO_HASH);
      if (!key || !match || key.disabled) throw new AppError(401, INVALID_CREDENTIALS);
      entry = {
        hash: key.secret_hash,
        principal: { account: key.user_id, actor: { type: 'key', id: key.id, name: key.name }, grant: keyGrant(key.scopes) },
        lastUsed: key.last_used_at ? Date.parse(key.last_used_at) : -Infinity,
        version: version ?? 0,
      };
      if (version !== undefined) {
        if (remembered.size >= MAX_REMEMBERED) remembered.delete(remembered.keys().next().value!);
        remembered.set(publicKey, entry);
      }
    }
    const now = clock.now();
    if (now.getTime() - entry.lastUsed >= LAST_USED_EVERY_MS) {
      entry.lastUsed = now.getTime();
      await keys.touch(entry.principal.actor.id, now);
    }
    return entry.principal;
  }

  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config;
    if (config?.public || !request.routeOptions.url) return;
    const publicKey = header(request, 'publickey');
    const secretKey = header(request, 'secretkey');
    if (!publicKey || !secretKey) {
      const errors: Record<string, string[]> = {};
      if (!publicKey) errors.PublicKey = ['The public key field is required.'];
      if (!secretKey) errors.SecretKey = ['The secret key field is required.'];
      throw new AppError(401, errors);
    }
    const principal = await byKey(publicKey, secretKey);
    request.userId = principal.account;
    request.principal = principal;
    enforceScope(principal, config.scope);
  });
}
