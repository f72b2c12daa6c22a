/**
 * The automations' part of the mail queue: who is enrolled, when each enrolled address's next
 * email is due, and turning due steps into queued messages. Service functions call the
 * transition functions here inside their own transaction.
 *
 * STUB: the signatures are fixed; the bodies are being written.
 */
import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/index.js';
import type { AutomationRow, AutomationScheduleRow } from './automations.types.js';

/**
 * Called by set-live, in its transaction, after the row was set to status 1 (and `live_at` filled
 * the first time): enrols the target's members (custom: every current member; welcome: those who
 * joined since `live_at`), releases the messages held by a pause, and wakes the workers.
 */
export async function automationLive(trx: Db, deps: AppDeps, automation: AutomationRow, now: Date): Promise<void> {
  void trx;
  void deps;
  void automation;
  void now;
}

/** Called by pause, in its transaction, after the row was set to status 0: holds its queued messages. */
export async function automationPaused(trx: Db, automationId: number, now: Date): Promise<void> {
  void trx;
  void automationId;
  void now;
}

/** Called by delete and bulk delete, in their transaction, after the rows were soft-deleted: cancels their unsent messages. */
export async function automationsDeleted(trx: Db, automationIds: number[], now: Date): Promise<void> {
  void trx;
  void automationIds;
  void now;
}

/** Called by schedule create, in its transaction, after the row was inserted: enrollments waiting at the end of the sequence wait for it. */
export async function scheduleAdded(trx: Db, schedule: AutomationScheduleRow, now: Date): Promise<void> {
  void trx;
  void schedule;
  void now;
}

/** Called by schedule delete, in its transaction, before the row is deleted: enrollments waiting for it wait for the next one. */
export async function scheduleRemoved(trx: Db, schedule: AutomationScheduleRow, now: Date): Promise<void> {
  void trx;
  void schedule;
  void now;
}
