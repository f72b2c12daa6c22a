/** Where the engine reads the time: the system clock in production, a controllable one in tests. */
export interface Clock {
  now(): Date;
}

/** The real time. */
export const systemClock: Clock = { now: () => new Date() };

/** A clock that stands still until told to move: schedules, waits and retries are tested on it. */
export interface TestClock extends Clock {
  /** Moves the time forward by `ms` milliseconds. */
  advance(ms: number): void;
  /** Sets the time. */
  set(date: Date | string): void;
}

/** A clock for tests, starting at `start`. */
export function testClock(start: Date | string = '2030-01-01T00:00:00.000Z'): TestClock {
  let t = new Date(start).getTime();
  return {
    now: () => new Date(t),
    advance: (ms) => {
      t += ms;
    },
    set: (date) => {
      t = new Date(date).getTime();
    },
  };
}
