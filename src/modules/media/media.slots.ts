/**
 * A counting semaphore: at most `size` callers run `work` at once, the others wait in order. Uploads
 * use two: how many are read into memory at once (the rest wait unread, held back by TCP), and how
 * many of those are decoded at once.
 */
export class Slots {
  private busy = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly size: number) {}

  /** Runs `work` once a slot is free, and frees it after. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.busy >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.busy++;
    try {
      return await work();
    } finally {
      // The slot passes straight to the next caller, if any.
      const next = this.waiting.shift();
      if (next) next();
      else this.busy--;
    }
  }
}
