/**
 * Group commit: items are written in batches, each batch one write (one transaction), so the
 * items that come together share its cost: what counts on SQLite, whose writes hold the process,
 * and on PostgreSQL, where each statement is a round trip and each commit a flush of the log.
 *
 * Two ways to start a batch, one implementation:
 * - `tick` (requests: opens, clicks, bounce intake): a batch starts on the next turn of the event
 *   loop after an item comes, so the items of one moment go together; items that come while
 *   batches are written wait for the next one. Each caller's promise settles after the commit.
 *   Optionally gated: while items are announced (`expect()`: a report being read) the batch waits
 *   for them, at most `maxWaitMs`.
 * - `flush` (the lanes' outcomes): a batch starts on `flush()`, or when `full` says the waiting
 *   items make one; one write at a time, in order. A failed write keeps its items, ahead of the
 *   newer ones, for the next.
 */

/** In a write's results, fails that item alone: its caller's promise rejects with `error`. */
export class ItemFailed {
  constructor(readonly error: unknown) {}
}

/**
 * Writes one batch and returns each item's result, in the batch's order (nothing for `void`).
 * A write that stores the batch in parts may call `written` with the items of each part stored,
 * so that a failure afterwards keeps only the others (`onFailure: 'keep'`).
 */
export type BatchWrite<T, R> = (batch: T[], written: (items: readonly T[]) => void) => Promise<ReadonlyArray<R | ItemFailed> | void>;

/** How batches are made. */
export interface BatcherOptions<T> {
  /** When a batch starts: on the next turn of the event loop after an item comes (`tick`), or on `flush()` and `full` (`flush`). */
  start: 'tick' | 'flush';
  /** What a failed write does: `reject` its callers' promises, or `keep` its items for the next write. */
  onFailure: 'reject' | 'keep';
  /** The most items in one batch (default: all that wait). */
  max?: number;
  /** `tick`: the most batches written at the same time (default 1), each in its own transaction. */
  parallel?: number;
  /** `tick`: a batch waits while announced items are still coming (`expect()`), at most this long (default: it never waits). */
  maxWaitMs?: number;
  /** `flush`: whether the waiting items make a batch, asked as each item comes. */
  full?: (waiting: readonly T[]) => boolean;
}

/** Items on their way to a batch. */
export interface Batcher<T, R = void> {
  /**
   * Adds an item. The promise settles once the batch holding it is written: with the item's
   * result, or with the write's error (`reject`); a kept item's promise waits for a later write.
   */
  add(item: T): Promise<R>;
  /** Announces items (a report being read); call the function returned once they are added, or none came. */
  expect(): () => void;
  /** Writes what waits now as one batch (at most `max`), after the writes `flush()` started before; never rejects. */
  flush(): Promise<void>;
  /** How many items wait for a batch. */
  readonly size: number;
}

/** A caller waiting for its item's batch. */
interface Caller<R> {
  resolve(result: R): void;
  reject(err: unknown): void;
}

/** A batcher that writes its items with `write` (see above). */
export function batcher<T, R = void>(write: BatchWrite<T, R>, opts: BatcherOptions<T>): Batcher<T, R> {
  const max = opts.max ?? Infinity;
  const parallel = opts.parallel ?? 1;
  // Items and their callers, side by side: `full` reads the items without a copy.
  let items: T[] = [];
  let callers: Array<Caller<R>> = [];
  let running = 0;
  let scheduled = false;
  let reading = 0;
  let timer: NodeJS.Timeout | null = null;
  let flushed: Promise<void> = Promise.resolve();

  /** Writes one batch of what waits and settles its callers; never rejects. */
  const writeOne = async (): Promise<void> => {
    const batch = items.splice(0, max);
    const waiting = callers.splice(0, max);
    let stored: Set<T> | null = null;
    running++;
    try {
      const results = await write(batch, (part) => {
        stored ??= new Set();
        for (const item of part) stored.add(item);
      });
      waiting.forEach((c, i) => {
        const r = results?.[i];
        if (r instanceof ItemFailed) c.reject(r.error);
        else c.resolve(r as R);
      });
    } catch (err) {
      if (opts.onFailure === 'reject') {
        for (const c of waiting) c.reject(err);
      } else {
        const done = stored ?? new Set<T>();
        const keep = batch.map((item, i) => ({ item, caller: waiting[i] })).filter((k) => !done.has(k.item));
        for (const [i, item] of batch.entries()) if (done.has(item)) waiting[i].resolve(undefined as R);
        // Ahead of the items that came meanwhile: the next write takes them in their order.
        items = keep.map((k) => k.item).concat(items);
        callers = keep.map((k) => k.caller).concat(callers);
      }
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
    while (running < parallel && items.length > 0) void writeOne();
  };

  /** `tick`: starts a batch on the next turn when one may run and nothing announced is coming; else within `maxWaitMs`. */
  const kick = () => {
    if (opts.start !== 'tick' || scheduled || items.length === 0 || running >= parallel) return;
    if (opts.maxWaitMs !== undefined && reading > 0) {
      if (!timer) {
        timer = setTimeout(start, opts.maxWaitMs);
        timer.unref();
      }
      return;
    }
    scheduled = true;
    setImmediate(start);
  };

  const flush = (): Promise<void> => (flushed = flushed.then(() => (items.length > 0 ? writeOne() : undefined)));

  return {
    add(item) {
      return new Promise<R>((resolve, reject) => {
        items.push(item);
        callers.push({ resolve, reject });
        if (opts.start === 'tick') kick();
        else if (opts.full?.(items)) void flush();
      });
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
    flush,
    get size() {
      return items.length;
    },
  };
}
