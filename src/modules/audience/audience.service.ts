/**
 * The one entry point for "the contacts of an audience changed": every change to contacts (added,
 * updated, imported, deleted) or to what their segments read (a contact type or a custom field
 * deleted) calls `audienceChanged` in its own transaction.
 */
import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/index.js';
import { enrollJoiners } from '../automations/automations.enroll.js';
import { syncSegmentMembership, type ContactsChange } from '../segments/segments.membership.js';

/**
 * Brings segment membership up to date with the change (the segments publish it: the automations
 * on them enrol who joined), then enrols the contacts who joined a contact type in the automations
 * on it that have gone live. Call it in the transaction of the change, so an acknowledged change
 * never loses a membership or an enrollment. `{ contactIds }` names the contacts that changed;
 * `{ contactTypeId }` every contact of a type (an import, a deleted type); `{ fieldName }` a
 * deleted custom field (segments naming it; no contact joins a type).
 */
export async function audienceChanged(trx: Db, deps: AppDeps, userId: number, change: ContactsChange): Promise<void> {
  await syncSegmentMembership(trx, deps, userId, change);
  if (change.contactIds) await enrollJoiners(trx, deps, userId, { contactIds: change.contactIds });
  else if (change.contactTypeId !== undefined) await enrollJoiners(trx, deps, userId, { contactTypeId: change.contactTypeId });
}
