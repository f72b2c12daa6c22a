/**
 * The sunset policy's scheduled task: every account whose policy is on has its inactive addresses
 * brought up to date at least hourly (`sweepSunset`), so an address that goes quiet by the passing
 * of time is listed, and stops getting automation emails, within the hour.
 */
import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/index.js';
import type { ScheduledTask } from '../../jobs/scheduler.lane.js';
import { SWEEP_EVERY_MS, sweepSunset } from '../../suppression/sunset.sweep.js';
import { isoMicros } from '../../util/time.js';

/** The accounts whose policy is on and whose last sweep is older than SWEEP_EVERY_MS at `now` (or never ran). */
function dueAccounts(db: Db, now: Date) {
  return db
    .selectFrom('account_settings')
    .select('user_id')
    .where('sunset_enabled', '=', 1)
    .where((eb) =>
      eb.or([eb('sunset_swept_at', 'is', null), eb('sunset_swept_at', '<=', isoMicros(new Date(now.getTime() - SWEEP_EVERY_MS)))]),
    )
    .orderBy('user_id')
    .execute();
}

/** Sweeps every account that is due, one transaction each. Returns how many entries changed. */
async function sweepDueAccounts(deps: AppDeps, now: Date): Promise<number> {
  let changed = 0;
  for (const { user_id } of await dueAccounts(deps.database.db, now)) {
    const r = await deps.database.db.transaction().execute((trx) => sweepSunset(trx, user_id, now));
    if (r.added + r.removed > 0) deps.log.info({ userId: user_id, ...r }, 'sunset policy: inactive addresses updated');
    changed += r.added + r.removed;
  }
  return changed;
}

/** When the next account's sweep is due: an hour after the oldest sweep of an account whose policy is on. */
async function nextSweepAt(db: Db, now: Date): Promise<Date | null> {
  const rows = await db.selectFrom('account_settings').select('sunset_swept_at').where('sunset_enabled', '=', 1).execute();
  if (rows.length === 0) return null;
  if (rows.some((r) => r.sunset_swept_at === null)) return now;
  const oldest = rows.map((r) => r.sunset_swept_at!).reduce((a, b) => (a < b ? a : b));
  return new Date(new Date(oldest).getTime() + SWEEP_EVERY_MS);
}

/** Keeps the inactive addresses of accounts whose sunset policy is on up to date, hourly. */
export const sunsetSweepTask: ScheduledTask = {
  name: 'sweep inactive addresses',
  run: sweepDueAccounts,
  nextDueAt: (deps, now) => nextSweepAt(deps.database.db, now),
};
