/**
 * The single sends' scheduled tasks: start the sends that came due (status 1 → 2, recipients
 * queued) and complete those with nothing left to send (status 2 → 3, `sent_at`, the
 * `single_send.completed` notifications). Each send changes in one transaction, guarded by its
 * status, so several processes on one database never start or complete a send twice.
 */
import type { AppDeps } from '../../deps.js';
import type { ScheduledTask } from '../../jobs/scheduler.lane.js';
import type { MailKind } from '../../messages/messages.kinds.js';
import { wakeWorkers } from '../../messages/mail.queue.js';
import { enqueueEvent } from '../notifications/notifications.events.js';
import { refreshTargetedSegments } from '../segments/segments.live.js';
import { refsOf } from '../../delivery/audience.js';
import { sweepSunset } from '../../suppression/sunset.sweep.js';
import { renderSingleSendBatch, singleSendGroups } from './message.js';
import type { Db } from '../../db/index.js';
import { countVariants } from './ab-tests.queries.js';
import { resolveRecipients, resolveTestShare } from './recipients.js';
import type { SingleSendRow } from './single-sends.schema.js';
import { claimDueSend, completeSend, nextSendDueAt, selectDueSends, selectFinishedSends, setTriggered } from './single-sends.queries.js';

/** Sends looked at per query; a run loops until none is left. */
const BATCH = 20;

/**
 * Brings a send's audience up to this moment (segments with engagement conditions, the sunset
 * policy), then queues its messages with `resolve`, in the caller's transaction: at the start of
 * a send, and when an A/B test's winner goes to the rest. Returns what `resolve` queued.
 */
export async function queueAudience(
  trx: Db,
  deps: AppDeps,
  send: SingleSendRow,
  now: Date,
  resolve: () => Promise<number>,
): Promise<number> {
  const refs = [...refsOf(send.recipient_id), ...refsOf(send.exclude_specific_recipient_id)];
  await refreshTargetedSegments(trx, deps, send.user_id, refs, now);
  await sweepSunset(trx, send.user_id, now);
  return resolve();
}

/**
 * Starts every ready send whose time has come by `now`: in one transaction each, moves it to
 * running (only the process whose conditional update wins goes on), queues its recipients (an A/B
 * test: its test share) and sets `triggered`. A send whose time passed while no worker ran starts at the scheduler's first round.
 * Returns how many sends this process started.
 */
export async function startDueSends(deps: AppDeps, now: Date): Promise<number> {
  const { db } = deps.database;
  let started = 0;
  const seen = new Set<number>();
  for (;;) {
    const due = (await selectDueSends(db, now, BATCH)).filter((r) => !seen.has(r.id));
    if (due.length === 0) return started;
    for (const { id } of due) {
      seen.add(id);
      const won = await db.transaction().execute(async (trx) => {
        const send = await claimDueSend(trx, id, now);
        if (!send) return null;
        // An A/B test starts with its test share only; the rest go when the winner is chosen.
        const variants = Number(send.ab_test) === 1 ? await countVariants(trx, id) : 0;
        const recipients = await queueAudience(trx, deps, send, now, () =>
          variants > 0 ? resolveTestShare(trx, send, variants, now) : resolveRecipients(trx, send, now),
        );
        await setTriggered(trx, id, recipients);
        await wakeWorkers(trx);
        return { send, recipients };
      });
      if (!won) continue;
      started++;
      const { send, recipients } = won;
      deps.log.info({ singleSend: send.utr, userId: send.user_id, recipients }, 'single send started');
    }
  }
}

/**
 * Completes every running send with no queued or sending message left: status 3 and `sent_at`,
 * and (unless the send was deleted, which cancelled it) a `single_send.completed` mail queued for
 * each notification recipient of the account, in the same transaction. Returns how many.
 */
export async function completeSends(deps: AppDeps, now: Date): Promise<number> {
  const { db } = deps.database;
  let completed = 0;
  for (;;) {
    const finished = await selectFinishedSends(db, BATCH);
    if (finished.length === 0) return completed;
    for (const { id } of finished) {
      const done = await db.transaction().execute(async (trx) => {
        const send = await completeSend(trx, id, now);
        if (!send) return null;
        if (send.deleted_at !== null) return send;
        const details = {
          single_send_name: send.single_send_name,
          utr: send.utr,
          triggered: send.triggered,
          delivered: send.delivered,
          bounces: send.bounces,
          sent_at: send.sent_at,
        };
        await enqueueEvent(trx, deps, send.user_id, 'single_send.completed', details);
        return send;
      });
      if (!done) continue;
      completed++;
      const { utr, user_id, triggered, delivered, bounces, deleted_at } = done;
      deps.log.info(
        { singleSend: utr, userId: user_id, triggered, delivered, bounces, deleted: deleted_at !== null },
        'single send completed',
      );
    }
  }
}

/**
 * Single sends as a kind of mail: their messages rendered from the send's design, counted on the
 * send's row. Starting and completing the sends are the scheduled tasks below.
 */
export const singleSendKind: MailKind = {
  name: 'single_send',
  render: renderSingleSendBatch,
  unsubscribeGroups: singleSendGroups,
  source: {
    table: 'single_sends',
    key: 'single_send_id',
    counters: {
      delivered: 'delivered',
      bounces: 'bounces',
      hard_bounces: 'hard_bounces',
      soft_bounces: 'soft_bounces',
      spam_reports: 'spam_reports',
      total_opens: 'total_opens',
      unique_opens: 'unique_opens',
      total_clicks: 'total_clicks',
      unique_clicks: 'unique_clicks',
      unsubscribes: 'unsubscribes',
      machine_opens: 'machine_opens',
      unique_human_opens: 'unique_human_opens',
      bot_clicks: 'bot_clicks',
    },
    group: 'unsubscribe_group_id',
    utr: 'utr',
  },
};

/** Starts the sends whose time came: due when the next scheduled send is. */
export const startSendsTask: ScheduledTask = {
  name: 'start due single sends',
  run: startDueSends,
  nextDueAt: (deps) => nextSendDueAt(deps.database.db),
};

/** Completes the running sends with nothing left to send: after the mail lane sent a batch. */
export const completeSendsTask: ScheduledTask = {
  name: 'complete single sends',
  run: completeSends,
};
