/**
 * Every scheduled task the scheduler lane runs, listed once, in the order of each round: bring the
 * inactive addresses of accounts with a sunset policy up to date, start the sends that came due,
 * begin the waits and choose the winners of A/B tests, recompute the live segments (engagement
 * conditions: no read recomputes them; the automations on them enrol who joined), step the
 * automations, then complete the sends with nothing left to send, and delete the audit entries
 * past their 400 days, the ended sessions and old failed sign-ins, and check again the sending
 * domains whose last check is an hour old. A task is declared by the
 * module that owns the work; the job runner names none.
 */
import type { ScheduledTask } from './jobs/scheduler.lane.js';
import { auditRetentionTask } from './modules/access/audit.service.js';
import { automationStepsTask } from './modules/automations/automations.engine.js';
import { sessionCleanupTask } from './modules/access/sessions.service.js';
import { liveSegmentsTask } from './modules/segments/segments.live.js';
import { abTestsTask } from './modules/single-sends/ab-tests.engine.js';
import { completeSendsTask, startSendsTask } from './modules/single-sends/single-sends.engine.js';
import { domainRecheckTask } from './modules/sending-domains/sending-domains.engine.js';
import { sunsetSweepTask } from './modules/suppressions/suppressions.sunset.js';

export const SCHEDULED_TASKS: readonly ScheduledTask[] = [
  sunsetSweepTask,
  startSendsTask,
  abTestsTask,
  liveSegmentsTask,
  automationStepsTask,
  completeSendsTask,
  auditRetentionTask,
  sessionCleanupTask,
  domainRecheckTask,
];
