/** The API's shapes the People & access pages read (the OpenAPI document at /openapi.json has them all). */
import type { Action } from '../../lib/action.svelte';
import type { Person } from '../../lib/auth.svelte';

export type { Person };

/** Who did something or made a key: a person (by their email) or a key (by its name). */
export interface Actor {
  type: 'user' | 'key';
  id: number;
  name: string;
}

export interface ApiKey {
  id: number;
  name: string;
  public_key: string;
  scopes: 'full' | string[];
  created_at: string;
  created_by: Actor | null;
  last_used_at: string | null;
}

export interface AuditEntry {
  id: number;
  actor: Actor;
  action: string;
  target: string | null;
  status: number;
  ip: string | null;
  user_agent: string | null;
  created_at: string;
}

export const ROLES = ['owner', 'admin', 'editor', 'viewer'] as const;

/** What each role may do, in words (the scopes come from the service). */
export const ROLE_NOTES: Record<(typeof ROLES)[number], string> = {
  owner: 'everything, including making and removing owners',
  admin: 'everything but making, changing or removing owners',
  editor: 'builds and sends campaigns; no people, keys or audit log; sees webhooks and settings without changing them',
  viewer: 'sees everything but people, keys and the audit log; changes nothing',
};

/** Refuses a new password typed twice differently, on the `again` field (as the service marks its own fields). */
export function checkRepeated(act: Action, password: string, again: string): void {
  if (password === again) return;
  act.fieldErrors = { again: ['The two passwords differ.'] };
  throw new Error('The two passwords differ.');
}
