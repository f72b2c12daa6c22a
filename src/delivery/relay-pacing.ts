/**
 * How one worker paces its messages to a rate-limited relay, around the turns the database hands
 * out (`relay-state.ts`): how many it has with the relay at once, when one that came back late must
 * use up a turn more, and abortable waits.
 */

/** The worker stopped while the message waited for a relay: it was not handed to any server. */
export class RelayWaitAborted extends Error {}

/** At most `size` holders at once; the others wait in order, and an abort ends a wait. */
export class Gate {
  private held = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly size: number) {}

  /** Waits for a place; rejects with `RelayWaitAborted` when `signal` ends the wait. */
  enter(signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(new RelayWaitAborted());
      if (this.held < this.size) {
        this.held++;
        return resolve();
      }
      const go = () => {
        signal.removeEventListener('abort', abort);
        resolve();
      };
      const abort = () => {
        const i = this.waiting.indexOf(go);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(new RelayWaitAborted());
      };
      this.waiting.push(go);
      signal.addEventListener('abort', abort, { once: true });
    });
  }

  /** Gives the place to the next waiting holder, or frees it. */
  leave(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.held--;
  }
}

/** Sleeps `ms` real milliseconds; an abort ends it with `RelayWaitAborted`. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new RelayWaitAborted());
    const done = () => {
      signal.removeEventListener('abort', abort);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(new RelayWaitAborted());
    };
    signal.addEventListener('abort', abort, { once: true });
  });
}

/**
 * How many messages one worker has with a rate-limited relay at once, from taking a turn (which
 * may be a few turns ahead) until the relay accepted the message: one per 100 msg/s of rate, so
 * that messages taking up to 10 ms keep the rate, and one more for a slow one (2 at 20/s, 3 at
 * 200/s). Few, because each waits for its turn on a timer, and a stall of the event loop releases
 * all those due together, each then costing a turn (`cameLate`); with one lane, two workers at
 * 20/s on a loaded machine fell to 14 msg/s.
 */
export function lanesFor(rate: number): number {
  return Math.ceil(rate / 100) + 1;
}

/** How many of its last messages a worker compares a message's delay with (see `cameLate`). */
export const DELAYS_KEPT = 32;

/**
 * Whether a message the relay accepted `delayMs` after its turn came late: more than an interval
 * later than the quickest of the worker's recent messages (`recent`, which this updates). Messages
 * all slow alike reach the relay spaced as their turns were; one later than the others by more
 * than an interval lands among the messages of later turns. Until the worker has sent
 * `DELAYS_KEPT` messages the comparison is with a delay of 0: its first messages open connections,
 * and those can land together.
 */
export function cameLate(recent: number[], delayMs: number, intervalMs: number): boolean {
  const quickest = recent.length < DELAYS_KEPT ? 0 : Math.min(...recent);
  recent.push(delayMs);
  if (recent.length > DELAYS_KEPT) recent.shift();
  return delayMs - quickest > intervalMs;
}
