/** The records the People & access pages read: pieces of the service's answers (see lib/types.ts). */
import type { Action } from '../../lib/action.svelte';
import type { Message } from '../../lib/api';
import type { Person } from '../../lib/auth.svelte';

export type { Person };

export type ApiKey = Message<'/keys'>['keys'][number];

export type AuditEntry = Message<'/audit-log'>['entries'][number];

/** Who did something or made a key: a person (by their email) or a key (by its name). */
export type Actor = AuditEntry['actor'];

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
