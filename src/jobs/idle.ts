import type { Listener } from '../db/listener.js';

/** How a lane's loop waits when it has nothing to do. */
export interface IdleWait {
  /** Starts a round: a wake-up from now on ends the next wait at once. */
  reset(): void;
  /** Waits `ms`, or less: a notification on the channel or a `nudge` (since `reset`), or `stop`, ends it. */
  wait(ms: number): Promise<void>;
  /** Waits `ms`; only `stop` ends it sooner (the pause after a failure, which notifications must not shorten). */
  pause(ms: number): Promise<void>;
  /** Wakes the lane from inside the process (another lane did work it may follow up). */
  nudge(): void;
  /** Ends the wait under way and any later one, and stops listening. */
  stop(): void;
}

/**
 * The idle wait of a lane's loop: on PostgreSQL a notification on `channel` (heard through the
 * process's listener, when given) wakes it, also one that came while the lane was busy; on
 * SQLite, without a listener, only its timer or a nudge from another lane of the process does.
 */
export function idleWait(listener: Listener | null | undefined, channel: string | null): IdleWait {
  let woken = false;
  let stopped = false;
  let wakeIdle: (() => void) | null = null;
  let endPause: (() => void) | null = null;
  const wake = () => {
    woken = true;
    wakeIdle?.();
  };
  /** Sleeps `ms`; `hold` is given the function that ends the sleep early. */
  const sleep = (ms: number, hold: (end: () => void) => void) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(end, ms);
      function end() {
        clearTimeout(timer);
        resolve();
      }
      hold(end);
    });
  const unlisten = channel ? listener?.listen(channel, wake) : undefined;
  return {
    reset: () => {
      woken = false;
    },
    wait: async (ms) => {
      if (woken || stopped) return;
      await sleep(ms, (end) => (wakeIdle = end));
      wakeIdle = null;
    },
    pause: async (ms) => {
      if (stopped) return;
      await sleep(ms, (end) => (endPause = end));
      endPause = null;
    },
    nudge: wake,
    stop: () => {
      stopped = true;
      unlisten?.();
      wakeIdle?.();
      endPause?.();
    },
  };
}
