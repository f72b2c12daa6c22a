/**
 * A/B tests of single sends, after their start (docs/ab-tests.md): the wait begins once the test
 * share has been handed to the SMTP server; when it ends (or by hand, `chooseWinner` with a
 * variant) the winner is written once, and in the same transaction the rest of the recipients,
 * resolved at that moment, are queued with the winner's mail and the `single_send.ab_winner`
 * event is written. The send is running throughout; it completes as any send once nothing is left.
 */
import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/index.js';
import { emitEvents } from '../../events/outbox.js';
import type { ScheduledTask } from '../../jobs/scheduler.lane.js';
import { wakeWorkers } from '../../messages/mail.queue.js';
import {
  addTriggered,
  claimWinner,
  nextWaitEndsAt,
  selectSharesSent,
  selectVariants,
  selectWaitsOver,
  setWaitEnd,
  variantFigures,
  type VariantFigures,
} from './ab-tests.queries.js';
import type { Metric } from './ab-tests.schema.js';
import { resolveRecipients } from './recipients.js';
import { queueAudience } from './single-sends.engine.js';
import type { SingleSendRow } from './single-sends.schema.js';

/** Sends looked at per query; a run loops until none is left. */
const BATCH = 20;

/** One variant's figures, with its index and subject. */
export type VariantStats = VariantFigures & { index: number; subject: string };

/**
 * The figures of each variant of a send's A/B test (0 first; zeros for a variant with no message
 * yet), read from the messages of its test share; empty without a test.
 */
export async function testFigures(db: Db, send: SingleSendRow): Promise<VariantStats[]> {
  if (Number(send.ab_test) !== 1) return [];
  const [variants, figures] = await Promise.all([selectVariants(db, [send.id]), variantFigures(db, send.id)]);
  const subjects = [send.subject, ...variants.map((v) => v.subject)];
  const none: VariantFigures = { triggered: 0, delivered: 0, unique_human_opens: 0, unique_clicks: 0 };
  return subjects.map((subject, index) => ({ index, subject, ...(figures.get(index) ?? none) }));
}

/** People who engaged: unique people's opens, or unique people's clicks. */
const engagedOf = (f: VariantFigures, metric: Metric) => (metric === 'clicks' ? f.unique_clicks : f.unique_human_opens);

/** Each variant's rate (engaged over delivered; 0 with nothing delivered), in index order. */
export function ratesOf(figures: readonly VariantStats[], metric: Metric): number[] {
  return figures.map((f) => (f.delivered > 0 ? engagedOf(f, metric) / f.delivered : 0));
}

/**
 * The winner: the highest rate of `metric` over delivered, compared exactly (as fractions, by
 * cross-multiplying the counts); a tie goes to the lower index.
 */
export function bestVariant(figures: readonly VariantStats[], metric: Metric): number {
  let best = 0;
  const [e0, d0] = [engagedOf(figures[0], metric), figures[0].delivered];
  let [be, bd] = d0 > 0 ? [e0, d0] : [0, 1];
  for (const f of figures.slice(1)) {
    const [e, d] = f.delivered > 0 ? [engagedOf(f, metric), f.delivered] : [0, 1];
    if (e * bd > be * d) [best, be, bd] = [f.index, e, d];
  }
  return best;
}

/** What choosing a winner did. */
export interface Chosen {
  send: SingleSendRow;
  winner: number;
  rates: number[];
  /** Messages queued for the rest of the recipients. */
  queued: number;
}

/**
 * Chooses a running test's winner, in one transaction: `variant` (by hand, while it waits), or,
 * when its wait is over, the best on its metric. Writes the winner once (a concurrent choice finds
 * it set and does nothing), queues the winner's mail for every recipient not yet queued (resolved
 * now: exclusions, unsubscribes and suppressions since the start apply; the unique index keeps out
 * those of the test share), adds them to `triggered` and writes the `single_send.ab_winner` event.
 * Returns null when the test was not (or no longer) waiting for a winner.
 */
export async function chooseWinner(deps: AppDeps, sendId: number, variant: number | null, now: Date): Promise<Chosen | null> {
  return deps.database.db.transaction().execute(async (trx) => {
    const current = await trx.selectFrom('single_sends').selectAll().where('id', '=', sendId).executeTakeFirst();
    if (!current || Number(current.ab_test) !== 1) return null;
    const metric = (current.ab_winner_metric ?? 'opens') as Metric;
    const figures = await testFigures(trx, current);
    const winner = variant ?? bestVariant(figures, metric);
    const send = await claimWinner(trx, sendId, winner, now, variant === null);
    if (!send) return null;
    const queued = await queueAudience(trx, deps, send, now, () => resolveRecipients(trx, send, now));
    await addTriggered(trx, sendId, queued);
    const rates = ratesOf(figures, metric);
    await emitEvents(trx, now, [
      {
        userId: send.user_id,
        type: 'single_send.ab_winner',
        data: { utr: send.utr, variant: winner, metric, rates, manual: variant !== null },
      },
    ]);
    await wakeWorkers(trx);
    return { send, winner, rates, queued };
  });
}

/**
 * Begins the wait of every running test whose test share has been handed over: its end is
 * `ab_wait_minutes` from `now`, written once. Returns how many waits began.
 */
export async function beginWaits(deps: AppDeps, now: Date): Promise<number> {
  const { db } = deps.database;
  let begun = 0;
  const seen = new Set<number>();
  for (;;) {
    const sent = (await selectSharesSent(db, BATCH)).filter((s) => !seen.has(s.id));
    if (sent.length === 0) return begun;
    for (const { id, ab_wait_minutes } of sent) {
      seen.add(id);
      const endsAt = new Date(now.getTime() + Number(ab_wait_minutes ?? 0) * 60_000);
      if (!(await setWaitEnd(db, id, endsAt))) continue;
      begun++;
      deps.log.info({ singleSendId: id, waitEndsAt: endsAt.toISOString() }, 'single send A/B test: the test share went out; waiting');
    }
  }
}

/** Chooses the winner of every test whose wait ended by `now`. Returns how many. */
export async function chooseDueWinners(deps: AppDeps, now: Date): Promise<number> {
  let chosen = 0;
  const seen = new Set<number>();
  for (;;) {
    const due = (await selectWaitsOver(deps.database.db, now, BATCH)).filter((s) => !seen.has(s.id));
    if (due.length === 0) return chosen;
    for (const { id } of due) {
      seen.add(id);
      const done = await chooseWinner(deps, id, null, now);
      if (!done) continue;
      chosen++;
      const { send, winner, rates, queued } = done;
      deps.log.info({ singleSend: send.utr, userId: send.user_id, winner, rates, queued }, 'single send A/B test: winner chosen');
    }
  }
}

/**
 * The A/B tests' scheduled task: begins the waits of the tests whose share went out (after the
 * mail lane sent a batch), and chooses the winners whose wait ended: due when the next wait ends.
 */
export const abTestsTask: ScheduledTask = {
  name: 'single send A/B tests',
  run: async (deps, now) => (await beginWaits(deps, now)) + (await chooseDueWinners(deps, now)),
  nextDueAt: (deps) => nextWaitEndsAt(deps.database.db),
};
