import type { FastifyRequest } from 'fastify';
import { AppError } from './errors.js';
import { allows, grantOf, knownScope, type Grant, type Role, type RouteScope, type Scope } from './scopes.js';

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
  /**
   * The person at the start of the caller's chain of makers: the person signed in, or the person
   * who made this key (or the key that made it, …); null for a key whose chain starts at the
   * command line. A key the caller makes is bounded by this person too.
   */
  rootPerson: number | null;
  /** A person signed in: their session, role, and when they signed in (ms). */
  session?: { id: number; role: Role; twoFactor: boolean; signedInAt: number };
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

/** The 403 of a caller without the route's scope (a class of its own: `/v3/` answers it with SendGrid's text). */
export class ScopeRefused extends AppError {
  constructor(actor: Actor, scope: string) {
    super(403, `${actor.type === 'key' ? 'This key is' : 'You are'} not allowed to ${scope}.`);
  }
}

/** The 403 of a caller without the route's scope. */
export function notAllowed(actor: Actor, scope: string): AppError {
  return new ScopeRefused(actor, scope);
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

/** Whether a request may change something: any method but GET and HEAD, and the GET routes declared actions (`config.action`). */
export function mayChange(request: FastifyRequest): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return true;
  return request.routeOptions.config?.action === true;
}
