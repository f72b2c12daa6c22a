import type { Listener } from '../db/listener.js';

/** How a worker loop waits when it has nothing to do. */
export interface IdleWait {
  /** Starts a round: a notification heard from now on ends the next wait at once. */
  reset(): void;
  /** Waits `ms`, or less: a notification on the channel (since `reset`) or `stop` ends it. */
  wait(ms: number): Promise<void>;
  /** Ends the wait under way and any later one, and stops listening. */
  stop(): void;
}

/**
 * The idle wait of a worker loop: on PostgreSQL a notification on `channel` (heard through the
 * process's listener, when given) wakes it, also one that came while the worker was busy; on
 * SQLite, without a listener, only its timer does.
 */
export function idleWait(listener: Listener | null | undefined, channel: string): IdleWait {
  let woken = false;
  let stopped = false;
  let wakeIdle: (() => void) | null = null;
  const unlisten = listener?.listen(channel, () => {
    woken = true;
    wakeIdle?.();
  });
  return {
    reset: () => {
      woken = false;
    },
    wait: (ms) =>
      new Promise<void>((resolve) => {
        if (woken || stopped) return resolve();
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          wakeIdle = null;
          resolve();
        }
        wakeIdle = done;
      }),
    stop: () => {
      stopped = true;
      unlisten?.();
      wakeIdle?.();
    },
  };
}
