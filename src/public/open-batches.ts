import type { Db } from '../db/index.js';
import type { Clock } from '../util/clock.js';
import { MAIL_KINDS } from '../mail-kinds.js';
import { MAX_OPENS_BATCH, record } from '../ledger/ledger.js';

/** Counts opens for the pixel route, sharing transactions between requests that arrive together. */
export interface OpenBatches {
  /** Counts one open of the message (`machine`: a machine's; default a person's); resolves once it is committed (rejects if the batch failed). */
  count(messageId: number, machine?: boolean): Promise<void>;
}

/**
 * Group commit for opens: the first open starts a transaction at once; opens arriving while it runs
 * wait and go together in the next one (up to MAX_OPENS_BATCH). Under no load a hit is counted
 * alone and without delay; under load one transaction counts many hits, which is what lets the
 * pixel keep up (see docs/decisions.md). Each request still answers only after its open is
 * committed, so nothing is held in memory past a response and a crash loses no answered open.
 */
export function createOpenBatches(db: Db, clock: Clock): OpenBatches {
  let pending: Array<{ id: number; machine: boolean; done: () => void; fail: (err: unknown) => void }> = [];
  let running = false;

  async function drain(): Promise<void> {
    running = true;
    while (pending.length > 0) {
      // One turn of the event loop first: requests already received join this batch.
      await new Promise((r) => setImmediate(r));
      const batch = pending.slice(0, MAX_OPENS_BATCH);
      pending = pending.slice(MAX_OPENS_BATCH);
      try {
        const now = clock.now();
        await db.transaction().execute((trx) =>
          record(
            trx,
            { kinds: MAIL_KINDS, now },
            batch.map((p) => ({ type: 'opened', id: p.id, machine: p.machine })),
          ),
        );
        for (const p of batch) p.done();
      } catch (err) {
        for (const p of batch) p.fail(err);
      }
    }
    running = false;
  }

  return {
    count(messageId, machine) {
      return new Promise<void>((done, fail) => {
        pending.push({ id: messageId, machine: machine ?? false, done, fail });
        if (!running) void drain();
      });
    },
  };
}
