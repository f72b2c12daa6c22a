/**
 * Every scheduled task the scheduler lane runs, listed once, in the order of each round: start
 * the sends that came due, step the automations, then complete the sends with nothing left to
 * send. A task is declared by the module that owns the work; the job runner names none.
 */
import type { ScheduledTask } from './jobs/scheduler.lane.js';
import { automationStepsTask } from './modules/automations/automations.engine.js';
import { completeSendsTask, startSendsTask } from './modules/single-sends/single-sends.engine.js';

export const SCHEDULED_TASKS: readonly ScheduledTask[] = [startSendsTask, automationStepsTask, completeSendsTask];
