import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';

/** Which contacts changed: all of a contact type, or some contacts of it. */
export interface ContactsChange {
  contactTypeId?: number;
  contactIds?: number[];
}

/**
 * Keeps segment membership current after contacts are added, updated, imported or deleted, or
 * custom fields change. Call it inside the transaction that made the change.
 * (Filled in by the segments work; until then a no-op.)
 */
export async function syncSegmentMembership(_db: Kysely<DB>, _userId: number, _change: ContactsChange): Promise<void> {}
