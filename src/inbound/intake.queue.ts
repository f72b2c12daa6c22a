/**
 * Group commit for bounce intake: items (events and their waiting callers) are written in
 * batches, each a transaction, so concurrent reports share one. A batch starts once no report is
 * still being read (every report being parsed has handed over its events: `gate`), or after a
 * short wait when reading never pauses; the items that arrive while a batch is being written go
 * in the next one. Fewer, larger batches cost fewer statements per event: what counts on SQLite,
 * whose writes hold the process, and on PostgreSQL, where each statement is a round trip. On
 * PostgreSQL a second batch may be written while one waits for the server (`parallel`), each on
 * its own connection.
 */

/** What intake hands the queue: items to write, and the reports still being read. */
export interface Batcher<T> {
  /** Queues an item; it is written in one of the next batches. */
  add(item: T): void;
  /** Says a report is being read (its items will follow); call the function returned once they are added, or it turned out to have none. */
  expect(): () => void;
}

/** How batches are made. */
export interface BatcherOptions {
  /** The most items in one batch. */
  max: number;
  /** The most batches written at the same time. */
  parallel: number;
  /** Whether a batch waits until no report is being read (at most `maxWaitMs`). */
  gate: boolean;
  /** The longest an item waits for the reports being read before its batch starts anyway. */
  maxWaitMs: number;
}

/**
 * A queue that writes its items with `write`, in batches, in the order they came (see above).
 * `write` must not throw: it answers each item's caller itself.
 */
export function batcher<T>(write: (batch: T[]) => Promise<void>, opts: BatcherOptions): Batcher<T> {
  const waiting: T[] = [];
  let running = 0;
  let scheduled = false;
  let reading = 0;
  let timer: NodeJS.Timeout | null = null;

  /** Writes one batch, then looks for the next. */
  const runOne = async () => {
    running++;
    try {
      await write(waiting.splice(0, opts.max));
    } finally {
      running--;
      kick();
    }
  };

  /** Starts as many batches as may run now. */
  const start = () => {
    scheduled = false;
    if (timer) clearTimeout(timer);
    timer = null;
    while (running < opts.parallel && waiting.length > 0) void runOne();
  };

  /** Starts a batch when one may run and (gated) nothing is being read; else makes sure one starts within maxWaitMs. */
  const kick = () => {
    if (scheduled || waiting.length === 0 || running >= opts.parallel) return;
    if (opts.gate && reading > 0) {
      if (!timer) {
        timer = setTimeout(start, opts.maxWaitMs);
        timer.unref();
      }
      return;
    }
    scheduled = true;
    // The items of the same moment (the recipients of one report, concurrent requests) go together.
    setImmediate(start);
  };

  return {
    add(item) {
      waiting.push(item);
      kick();
    },
    expect() {
      reading++;
      let open = true;
      return () => {
        if (!open) return;
        open = false;
        reading--;
        kick();
      };
    },
  };
}
