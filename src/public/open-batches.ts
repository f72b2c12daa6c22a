import type { Db } from '../db/index.js';
import type { Clock } from '../util/clock.js';
import { MAX_OPENS_BATCH, record } from '../messages/ledger.js';
import type { MailKinds } from '../messages/messages.kinds.js';
import { batcher } from '../jobs/batcher.js';

/** Counts opens for the pixel route, sharing transactions between requests that arrive together. */
export interface OpenBatches {
  /** Counts one open of the message (`machine`: a machine's; default a person's); resolves once it is committed (rejects if the batch failed). */
  count(messageId: number, machine?: boolean): Promise<void>;
}

/**
 * Group commit for opens (src/jobs/batcher.ts): the first open starts a transaction on the next
 * turn of the event loop (the requests already received join it); opens arriving while it runs
 * wait and go together in the next one (up to MAX_OPENS_BATCH). Under no load a hit is counted
 * alone and without delay; under load one transaction counts many hits, which is what lets the
 * pixel keep up (see docs/decisions.md). Each request still answers only after its open is
 * committed, so nothing is held in memory past a response and a crash loses no answered open.
 * `kinds`: the kinds of mail the process knows (which say where an open is counted).
 */
export function createOpenBatches(db: Db, kinds: MailKinds, clock: Clock): OpenBatches {
  const opens = batcher<{ id: number; machine: boolean }>(
    async (batch) => {
      const now = clock.now();
      await db.transaction().execute((trx) =>
        record(
          trx,
          { kinds, now },
          batch.map((p) => ({ type: 'opened', id: p.id, machine: p.machine })),
        ),
      );
    },
    { start: 'tick', onFailure: 'reject', max: MAX_OPENS_BATCH },
  );
  return {
    count: (messageId, machine) => opens.add({ id: messageId, machine: machine ?? false }),
  };
}
