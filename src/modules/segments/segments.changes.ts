/**
 * Segments publish every change of their membership, in the transaction that made it; whoever
 * follows membership (automations enrol who joined) listens through `deps.membershipListeners`,
 * listed once in `src/membership-listeners.ts`. So segments import none of their listeners.
 */
import type { AppDeps, MembershipChange } from '../../deps.js';
import type { Db } from '../../db/index.js';

export type { MembershipChange, MembershipListener } from '../../deps.js';

/**
 * Tells every membership listener of the change, one after the other, in the caller's transaction.
 * Call it once the members are up to date, under the account's membership lock.
 */
export async function publishMembershipChange(trx: Db, deps: AppDeps, change: MembershipChange): Promise<void> {
  if (change.segmentIds.length === 0 || change.contactIds?.length === 0) return;
  for (const listen of deps.membershipListeners) await listen(trx, deps, change);
}
