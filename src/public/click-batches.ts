import type { Db } from '../db/index.js';
import type { ClickRef } from '../delivery/tracking.js';
import { MAIL_KINDS } from '../mail-kinds.js';
import { MAX_CLICKS_BATCH, record } from '../ledger/ledger.js';
import { clickKey, clickTargets } from './messages.queries.js';
import type { Clock } from '../util/clock.js';

/** Counts clicks for the redirect route, sharing transactions between requests that arrive together. */
export interface ClickBatches {
  /**
   * Counts one click; resolves once it is committed, with the URL to redirect to (the link's,
   * filled for the message's recipient), or null when the message and link do not go together
   * (nothing counted). Rejects if the batch failed.
   */
  count(click: ClickRef): Promise<string | null>;
}

/**
 * Counts a batch of clicks in one transaction: the clicks whose link belongs to their message
 * (`clickTargets`) are recorded by the ledger. Returns the URL of each click counted, by `clickKey`.
 */
async function countClicks(
  db: Db,
  clicks: readonly ClickRef[],
  now: Date,
  unsubscribeUrl: (messageId: number) => string,
): Promise<Map<string, string>> {
  return db.transaction().execute(async (trx) => {
    const urls = await clickTargets(trx, MAIL_KINDS, clicks, unsubscribeUrl);
    const events = clicks.flatMap((c) => {
      const url = urls.get(clickKey(c));
      return url === undefined ? [] : [{ type: 'clicked' as const, id: c.messageId, link: c.linkId, url }];
    });
    if (events.length > 0) await record(trx, { kinds: MAIL_KINDS, now }, events);
    return urls;
  });
}

/**
 * Group commit for clicks, as the open pixel's (`open-batches.ts`): the first click starts a
 * transaction at once; clicks arriving while it runs go together in the next one (up to
 * MAX_CLICKS_BATCH). Each request answers only after its click is committed.
 */
export function createClickBatches(db: Db, clock: Clock, unsubscribeUrl: (messageId: number) => string): ClickBatches {
  let pending: Array<{ click: ClickRef; done: (url: string | null) => void; fail: (err: unknown) => void }> = [];
  let running = false;

  async function drain(): Promise<void> {
    running = true;
    while (pending.length > 0) {
      // One turn of the event loop first: requests already received join this batch.
      await new Promise((r) => setImmediate(r));
      const batch = pending.slice(0, MAX_CLICKS_BATCH);
      pending = pending.slice(MAX_CLICKS_BATCH);
      try {
        const urls = await countClicks(
          db,
          batch.map((p) => p.click),
          clock.now(),
          unsubscribeUrl,
        );
        for (const p of batch) p.done(urls.get(clickKey(p.click)) ?? null);
      } catch (err) {
        for (const p of batch) p.fail(err);
      }
    }
    running = false;
  }

  return {
    count(click) {
      return new Promise((done, fail) => {
        pending.push({ click, done, fail });
        if (!running) void drain();
      });
    },
  };
}
