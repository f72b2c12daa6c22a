/**
 * Scopes: what a key or a person may do, by area. Every keyed route declares the one scope it
 * needs (`config: { scope: 'contacts.write' }`); the auth layer refuses a caller without it. A
 * `write` scope includes the `read` scope of its area.
 */

/** The areas of the API, each with a `read` and a `write` scope. */
export const AREAS = [
  'contacts',
  'segments',
  'lists',
  'senders',
  'designs',
  'sends',
  'automations',
  'forms',
  'webhooks',
  'settings',
  'users',
  'keys',
  'audit',
  'mail',
] as const;
export type Area = (typeof AREAS)[number];
export type Scope = `${Area}.${'read' | 'write'}`;

/** Every scope, area by area (`contacts.read`, `contacts.write`, …). */
export const SCOPES: readonly Scope[] = AREAS.flatMap((a) => [`${a}.read`, `${a}.write`] as Scope[]);

/** What a route declares: a scope, or `none` for a keyed route any caller may use (the geo lookup). */
export type RouteScope = Scope | 'none';

/** The roles of people, from most to least powerful. */
export const ROLES = ['owner', 'admin', 'editor', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

const isScope = (s: string): s is Scope => (SCOPES as readonly string[]).includes(s);

/** Whether `value` names a scope. */
export function knownScope(value: string): value is Scope {
  return isScope(value);
}

/** What a caller holds: every scope (`full`: an owner or a key made with `full`) or a set of them. */
export interface Grant {
  /** Owners and `full` keys: every scope, and the power to make and remove owners. */
  readonly full: boolean;
  /** Every scope the caller may use, with the `read` scope of each `write` one added. */
  readonly scopes: ReadonlySet<Scope>;
}

/** The grant of a list of scopes (`write` brings its area's `read`), or of `full`. */
export function grantOf(scopes: 'full' | readonly Scope[]): Grant {
  if (scopes === 'full') return { full: true, scopes: new Set(SCOPES) };
  const set = new Set<Scope>();
  for (const s of scopes) {
    set.add(s);
    if (s.endsWith('.write')) set.add(s.replace(/\.write$/, '.read') as Scope);
  }
  return { full: false, scopes: set };
}

const EDITOR_DENIED = new Set<string>(['users', 'keys', 'audit']);
const VIEWER_DENIED = EDITOR_DENIED;

/**
 * The scopes of each role: owners and admins every scope; editors every scope but those of people,
 * keys and the audit log, and but changing webhooks and settings; viewers every `read` scope but
 * those of people, keys and the audit log. Only owners are `full` (they make and remove owners).
 */
export const ROLE_GRANTS: Readonly<Record<Role, Grant>> = {
  owner: grantOf('full'),
  admin: { full: false, scopes: new Set(SCOPES) },
  editor: grantOf(SCOPES.filter((s) => !EDITOR_DENIED.has(s.split('.')[0]) && s !== 'webhooks.write' && s !== 'settings.write')),
  viewer: grantOf(SCOPES.filter((s) => s.endsWith('.read') && !VIEWER_DENIED.has(s.split('.')[0]))),
};

/** Whether `grant` allows `needed`. */
export function allows(grant: Grant, needed: Scope): boolean {
  return grant.scopes.has(needed);
}

/** What `grant` holds that `limit` holds too: a key made by a person is bounded by that person's role today. */
export function within(grant: Grant, limit: Grant): Grant {
  return { full: grant.full && limit.full, scopes: new Set([...grant.scopes].filter((s) => limit.scopes.has(s))) };
}

/** Whether `grant` holds everything `other` would (a key never gets more than its maker holds). */
export function covers(grant: Grant, other: Grant): boolean {
  if (other.full) return grant.full;
  for (const s of other.scopes) if (!grant.scopes.has(s)) return false;
  return true;
}
