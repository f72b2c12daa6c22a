/**
 * Every listener of segment membership changes, listed once: the automations on a segment enrol
 * who joined it. Segments publish each change in the transaction that made it and name no
 * listener (they are given these through `AppDeps.membershipListeners`), so no module that follows
 * segments is imported by them.
 */
import type { MembershipListener } from './deps.js';
import { enrollSegmentJoiners } from './modules/automations/automations.enroll.js';

export const MEMBERSHIP_LISTENERS: readonly MembershipListener[] = [enrollSegmentJoiners];
