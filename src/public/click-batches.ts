import type { Db } from '../db/index.js';
import { TRAP_LINK_ID, type ClickRef } from '../delivery/tracking.js';
import { MAX_CLICKS_BATCH, record, type ClickedEvent } from '../messages/ledger.js';
import type { MailKinds } from '../messages/messages.kinds.js';
import { clickKey, clickTargets } from './messages.queries.js';
import { batcher } from '../jobs/batcher.js';
import type { Clock } from '../util/clock.js';

/** Counts clicks for the redirect route, sharing transactions between requests that arrive together. */
export interface ClickBatches {
  /**
   * Counts one click (`scanner`: its agent shows a scanner's); resolves once it is committed, with
   * the URL to redirect to (the link's, filled for the message's recipient; the trap link's
   * target), or null when the message and link do not go together (nothing counted). Rejects if
   * the batch failed.
   */
  count(click: ClickRef, scanner: boolean): Promise<string | null>;
}

/** A click waiting for its batch. */
interface PendingClick {
  click: ClickRef;
  scanner: boolean;
}

/**
 * Counts a batch of clicks in one transaction: the clicks whose link belongs to their message
 * (`clickTargets`), and the trap link clicks of existing messages, are recorded by the ledger,
 * which tells people's clicks from scanners'. Returns the URL of each click counted, by `clickKey`.
 */
async function countClicks(
  db: Db,
  kinds: MailKinds,
  clicks: readonly PendingClick[],
  now: Date,
  unsubscribeUrl: (messageId: number) => string,
  trapTarget: string,
): Promise<Map<string, string>> {
  return db.transaction().execute(async (trx) => {
    const linked = clicks.filter((c) => c.click.linkId !== TRAP_LINK_ID).map((c) => c.click);
    const urls = await clickTargets(trx, kinds, linked, unsubscribeUrl);
    const events: ClickedEvent[] = [];
    const traps: ClickRef[] = [];
    for (const { click, scanner } of clicks) {
      const trap = click.linkId === TRAP_LINK_ID;
      const url = trap ? trapTarget : urls.get(clickKey(click));
      if (url === undefined) continue;
      events.push({ type: 'clicked', id: click.messageId, link: click.linkId, url, scanner });
      if (trap) traps.push(click);
    }
    if (events.length === 0) return urls;
    const counted = await record(trx, { kinds, now }, events);
    // A trap click redirects when its message exists, which the ledger's count says.
    let t = 0;
    events.forEach((e, i) => {
      if (e.link === TRAP_LINK_ID && counted[i] !== null) urls.set(clickKey(traps[t]), trapTarget);
      if (e.link === TRAP_LINK_ID) t++;
    });
    return urls;
  });
}

/**
 * Group commit for clicks, as the open pixel's (src/jobs/batcher.ts): the first click starts a
 * transaction on the next turn of the event loop; clicks arriving while it runs go together in the
 * next one (up to MAX_CLICKS_BATCH). Each request answers only after its click is committed.
 * `kinds`: the kinds of mail the process knows (which say where a click is counted).
 */
export function createClickBatches(
  db: Db,
  kinds: MailKinds,
  clock: Clock,
  unsubscribeUrl: (messageId: number) => string,
  trapTarget: string,
): ClickBatches {
  const clicks = batcher<PendingClick, string | null>(
    async (batch) => {
      const urls = await countClicks(db, kinds, batch, clock.now(), unsubscribeUrl, trapTarget);
      return batch.map((p) => urls.get(clickKey(p.click)) ?? null);
    },
    { start: 'tick', onFailure: 'reject', max: MAX_CLICKS_BATCH },
  );
  return {
    count: (click, scanner) => clicks.add({ click, scanner }),
  };
}
