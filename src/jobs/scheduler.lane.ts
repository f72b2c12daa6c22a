import type { AppDeps } from '../deps.js';
import type { Lane } from './runner.js';

/**
 * Work that comes due at a time, outside the mail queue (a scheduled send to start, an automation
 * step, a send to complete): declared by the module that owns it, listed once in
 * `src/scheduled-tasks.ts`. Each run must be safe beside other processes' runs on the same
 * database (a conditional update decides which one acts).
 */
export interface ScheduledTask {
  /** Its name in the log. */
  name: string;
  /** Does what came due by `now`; returns how many things it did (sends started, steps taken). */
  run(deps: AppDeps, now: Date): Promise<number>;
  /** When it comes due next, or null (not known; it also runs whenever the queue's channel is notified). */
  nextDueAt?(deps: AppDeps, now: Date): Promise<Date | null>;
}

/** The earlier of two times (null: none). */
const earliest = (a: Date | null, b: Date | null) => (a && b ? (a < b ? a : b) : (a ?? b));

/**
 * The scheduler lane: each round runs every task in the order given, and says how much they did.
 * It listens on `channel`, the mail queue's (given by `src/lanes.ts`): what the API queues or
 * schedules wakes it, and a batch the mail lane sent wakes it to complete what finished (and what
 * it starts wakes the mail lane). A
 * task that throws does not keep the others from running; the round then fails (and the runner
 * pauses the lane).
 */
export function schedulerLane(deps: AppDeps, tasks: readonly ScheduledTask[], channel: string): Lane {
  return {
    name: 'scheduler',
    channel,
    startLog: { tasks: tasks.map((t) => t.name) },
    async work() {
      let done = 0;
      let failure: unknown = null;
      for (const task of tasks) {
        try {
          done += await task.run(deps, deps.clock.now());
        } catch (err) {
          deps.log.error({ err, task: task.name }, 'scheduled task failed');
          failure ??= err;
        }
      }
      if (failure) throw failure;
      return done;
    },
    async nextDueAt(now) {
      let next: Date | null = null;
      for (const task of tasks) next = earliest(next, (await task.nextDueAt?.(deps, now)) ?? null);
      return next;
    },
  };
}
