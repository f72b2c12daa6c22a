import type { FastifyInstance, FastifyRequest } from 'fastify';
import type {} from '@fastify/cookie';
import { AppError } from './errors.js';
import type { Database } from '../db/index.js';
import type { Clock } from '../util/clock.js';
import { hashSecret, sameHash } from '../util/secrets.js';
import { grantOf, ROLE_GRANTS, within, type Role, type RouteScope } from './scopes.js';
import { enforceScope, keyGrant, mayChange, type Actor, type Principal } from './principal.js';
import { CSRF_HEADER, validCsrf } from './csrf.js';
import { splitToken } from './secret-tokens.js';

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
  /** The person at the start of the key's chain of makers; null when the chain starts at the command line. */
  root_person_id: number | null;
  /** That person's role today; null when they have been removed (or there is none). */
  root_role: string | null;
}

/** How auth reads and marks keys (the keys module's queries, handed over by `app.ts`). */
export interface KeyLookup {
  /** The key with this public key, with its account's state. */
  find(publicKey: string): Promise<KeyRecord | undefined>;
  /** Sets the key's `last_used_at` to `now` unless it was set within the last minute (by any process). */
  touch(id: number, now: Date): Promise<void>;
}

/** What authentication needs of a session, found by its id. */
export interface SessionRecord {
  id: number;
  user_id: number;
  person_id: number;
  secret_hash: string;
  /** When the person signed in (every sign-in makes a new session). */
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  email: string;
  role: string;
  /** Whether the person has two-factor authentication on (1/true). */
  two_factor: number | boolean;
  /** The account's `require_two_factor` setting. */
  require_two_factor: number;
  /** The account's `disabled` flag. */
  disabled: number;
}

/** How auth reads, marks and ends sessions (the sessions module's queries, handed over by `app.ts`). */
export interface SessionLookup {
  find(id: number): Promise<SessionRecord | undefined>;
  /** Sets `last_seen_at` to `now` unless it was set within the last minute. */
  touch(id: number, now: Date): Promise<void>;
  /** Ends a session (it expired). */
  end(id: number): Promise<void>;
}

/** The session cookie. */
export const SESSION_COOKIE = 'campaign_session';
/** A session ends after this long unused… */
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
/** …and this long after sign-in. */
export const SESSION_MAX_MS = 7 * 24 * 60 * 60 * 1000;

/** The 401 of a session route without a session. */
export const NOT_SIGNED_IN = 'Not signed in';
/** The 401 of a cookie whose session ended (signed out, expired, the person removed). */
export const SESSION_ENDED = 'Your session has ended: sign in again.';
/** The 403 of a state-changing request by session without the session's CSRF token. */
export const INVALID_CSRF = 'Invalid CSRF token';
/** The 403 of a person without two-factor in an account that requires it. */
export const TWO_FACTOR_REQUIRED = 'This account requires two-factor authentication: set it up first.';

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
    /** A route of the signed-in person themselves (`/session`, `/me/…`): a session, never keys; no scope. */
    sessionOnly?: boolean;
    /** With `sessionOnly`: open to a person without two-factor in an account that requires it (to set it up). */
    beforeTwoFactor?: boolean;
    /**
     * The scope a keyed route needs (`contacts.read`, `contacts.write`, …), or `none` for one any
     * caller may use. A keyed route that declares none is open to owners and `full` keys only.
     */
    scope?: RouteScope;
    /**
     * A GET route whose purpose is an action (the original interface defines pause, set-live,
     * duplicate and resend-mail as GETs): it changes state, so by session it needs the CSRF token
     * and it is written to the audit log. Every other GET changes nothing.
     */
    action?: boolean;
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

/**
 * The key pair of an `Authorization: Bearer <public key>.<secret key>` header (SendGrid's clients
 * send their key this way): null without such a header (or with another scheme); empty parts when
 * the token is not two non-empty parts around a dot. Neither key contains a dot (base64url).
 */
function bearerOf(request: FastifyRequest): { publicKey?: string; secretKey?: string } | null {
  const value = header(request, 'authorization');
  const match = value && /^bearer(?:\s+(.*))?$/is.exec(value);
  if (!match) return null;
  const token = (match[1] ?? '').trim();
  const dot = token.indexOf('.');
  if (dot <= 0 || dot === token.length - 1 || /\s/.test(token)) return {};
  return { publicKey: token.slice(0, dot), secretKey: token.slice(dot + 1) };
}

/** A remembered key or session: what the database said of it, while the credentials stay unchanged. */
interface Remembered {
  hash: string;
  principal: Principal;
  lastUsed: number;
  version: number;
  /** Sessions: when it ends at the latest, and whether the account requires two-factor. */
  expiresAt?: number;
  requireTwoFactor?: boolean;
}

/** Adds an entry to a bounded map, dropping the oldest when full. */
function remember<K>(map: Map<K, Remembered>, key: K, entry: Remembered): void {
  if (map.size >= MAX_REMEMBERED) map.delete(map.keys().next().value!);
  map.set(key, entry);
}

/**
 * Authenticates every non-public route, sets `request.userId` and `request.principal`, and
 * refuses a caller without the route's scope (403).
 *
 * Keys: the `PublicKey` and `SecretKey` headers, or `Authorization: Bearer <public key>.<secret key>`
 * (the same key; the headers win when both are sent). A missing header is a 401 naming it; a wrong pair,
 * an unknown or revoked key or a disabled account is one 401 text for all, so a caller cannot tell
 * which part was wrong. A key's first request sets its `last_used_at`; later ones move it at most
 * once a minute.
 *
 * Sessions: without key headers, the `campaign_session` cookie of a signed-in person, with the
 * person's role. A request that may change something must carry the session's CSRF token in
 * `X-CSRF-Token`. A session ends 12 hours unused or 7 days after sign-in (the app clock);
 * `last_seen_at` moves at most once a minute.
 */
export function registerAuth(
  app: FastifyInstance,
  deps: { database: Database; clock: Clock; appSecret: string },
  keys: KeyLookup,
  sessions: SessionLookup,
): void {
  const { database, clock, appSecret } = deps;
  app.decorateRequest('userId', 0);
  app.decorateRequest('principal', null);

  // The key last verified for each public key, while the credentials stay unchanged: a repeat call
  // skips the lookup and compares the hash of the given secret with it in constant time. Only the
  // hash is kept (what the database holds anyway), never the secret. Any change to accounts or keys
  // (a revocation, new scopes, a disabled account, by this process or another) moves
  // `database.version`, so a stale entry is not used; without a version nothing is kept.
  const remembered = new Map<string, Remembered>();
  const rememberedSessions = new Map<number, Remembered>();
  app.decorate('forgetCredentials', () => {
    remembered.clear();
    rememberedSessions.clear();
  });

  /**
   * The entry remembered under `id` when its hash matches the given secret's and nothing changed
   * since; else the one `load` reads (null: no such credential, or one that does not match). The
   * hashes are compared in constant time, against a hash no secret has when there is nothing to
   * compare with, so an unknown id costs what a wrong secret costs.
   */
  async function recall<K>(
    map: Map<K, Remembered>,
    id: K,
    secret: string,
    load: () => Promise<Omit<Remembered, 'version'> | null>,
  ): Promise<Remembered | null> {
    const given = hashSecret(secret);
    const version = database.version?.();
    const known = version === undefined ? undefined : map.get(id);
    if (known && known.version === version && sameHash(given, known.hash)) return known;
    const loaded = await load();
    if (!sameHash(given, loaded?.hash ?? NO_HASH) || !loaded) return null;
    const entry = { ...loaded, version: version ?? 0 };
    if (version !== undefined) remember(map, id, entry);
    return entry;
  }

  async function byKey(publicKey: string, secretKey: string): Promise<Principal> {
    const entry = await recall(remembered, publicKey, secretKey, async () => {
      const key = await keys.find(publicKey);
      if (!key || key.disabled) return null;
      // A key never holds more than the person at the start of its chain of makers does today
      // (a key they made, or a key made by such a key, …): a demotion narrows it, a removal ends
      // it. Only a chain that starts at the command line stands alone.
      const rooted = key.root_person_id !== null;
      if (rooted && key.root_role === null) return null;
      const grant = rooted ? within(keyGrant(key.scopes), ROLE_GRANTS[key.root_role as Role] ?? grantOf([])) : keyGrant(key.scopes);
      const actor: Actor = { type: 'key', id: key.id, name: key.name };
      const lastUsed = key.last_used_at ? Date.parse(key.last_used_at) : -Infinity;
      const principal: Principal = { account: key.user_id, actor, grant, rootPerson: key.root_person_id };
      return { hash: key.secret_hash, principal, lastUsed };
    });
    if (!entry) throw new AppError(401, INVALID_CREDENTIALS);
    const now = clock.now();
    if (now.getTime() - entry.lastUsed >= LAST_USED_EVERY_MS) {
      entry.lastUsed = now.getTime();
      await keys.touch(entry.principal.actor.id, now);
    }
    return entry.principal;
  }

  /** The session a cookie names, while it lasts; null for a malformed cookie, an ended or expired session. */
  async function bySession(cookie: string): Promise<Remembered | null> {
    const token = splitToken(cookie);
    if (!token) return null;
    const entry = await recall(rememberedSessions, token.id, token.secret, async () => {
      const row = await sessions.find(token.id);
      if (!row || row.disabled) return null;
      const role = row.role as Role;
      const actor: Actor = { type: 'user', id: row.person_id, name: row.email };
      const session = { id: row.id, role, twoFactor: Boolean(row.two_factor), signedInAt: Date.parse(row.created_at) };
      return {
        hash: row.secret_hash,
        principal: { account: row.user_id, actor, grant: ROLE_GRANTS[role] ?? grantOf([]), rootPerson: row.person_id, session },
        lastUsed: Date.parse(row.last_seen_at),
        expiresAt: Date.parse(row.expires_at),
        requireTwoFactor: Boolean(row.require_two_factor),
      };
    });
    if (!entry) return null;
    const now = clock.now().getTime();
    if (now >= entry.expiresAt! || now - entry.lastUsed >= SESSION_IDLE_MS) {
      rememberedSessions.delete(token.id);
      await sessions.end(token.id);
      return null;
    }
    if (now - entry.lastUsed >= LAST_USED_EVERY_MS) {
      entry.lastUsed = now;
      await sessions.touch(token.id, new Date(now));
    }
    return entry;
  }

  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config;
    if (config?.public || !request.routeOptions.url) return;
    const bearer = bearerOf(request);
    const publicKey = header(request, 'publickey') ?? bearer?.publicKey;
    const secretKey = header(request, 'secretkey') ?? bearer?.secretKey;
    const cookie = request.cookies?.[SESSION_COOKIE];
    if (config.sessionOnly || (!publicKey && !secretKey && !bearer && cookie)) {
      if (!cookie) throw new AppError(401, NOT_SIGNED_IN);
      const entry = await bySession(cookie);
      if (!entry) throw new AppError(401, SESSION_ENDED);
      const principal = entry.principal;
      // Known before the refusals below, so the audit log writes them as it writes every refusal.
      request.userId = principal.account;
      request.principal = principal;
      if (mayChange(request) && !validCsrf(appSecret, cookie, request.headers[CSRF_HEADER])) throw new AppError(403, INVALID_CSRF);
      if (entry.requireTwoFactor && !principal.session!.twoFactor && !config.beforeTwoFactor) throw new AppError(403, TWO_FACTOR_REQUIRED);
      if (!config.sessionOnly) enforceScope(principal, config.scope);
      return;
    }
    // A bearer token that is not `<public key>.<secret key>` is a wrong credential, not a missing one.
    if (bearer && (!publicKey || !secretKey)) throw new AppError(401, INVALID_CREDENTIALS);
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
