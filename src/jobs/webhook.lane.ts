import { Counter } from 'prom-client';
import type { AppDeps } from '../deps.js';
import type { Db } from '../db/index.js';
import { WEBHOOK_CHANNEL } from '../events/outbox.js';
import { maskedUrl } from '../events/webhooks.address.js';
import { createPoster, webhookSigner, type Signer } from '../events/webhooks.post.js';
import { metricOnce } from '../ops/metrics.js';
import { unseal, WEBHOOK_SECRET } from '../util/seal.js';
import { batcher } from './batcher.js';
import { DELIVERY_QUEUE, claimDueDeliveries, nextDeliveryDueAt, pruneEvents, settleAttempts } from './webhook.queue.js';
import type { AttemptOutcome, ClaimedDelivery, DisabledEndpoint } from './webhook.queue.js';
import { release } from './queue/release.js';
import { renew } from './queue/renew.js';
import type { Lane, WorkContext } from './runner.js';

/** How the webhook lane claims and posts; every field has a default. */
export interface WebhookLaneOptions {
  /** Deliveries claimed per batch (default 200). */
  batchSize?: number;
  /** Requests under way at once, over all endpoints (default 50). */
  concurrency?: number;
  /** Requests under way at once to one endpoint (default 10). */
  perEndpoint?: number;
  /** Outcomes written per database write (default 100). */
  flushSize?: number;
  /** Finished events older than 30 days deleted per idle tick (default 1000). */
  pruneLimit?: number;
  /** Connections may go to private addresses (default: the `WEBHOOKS_ALLOW_PRIVATE` setting). */
  allowPrivate?: boolean;
  /** Time limit of one attempt (default 10 s). */
  timeoutMs?: number;
}

/** `webhook_deliveries_total{outcome}` on a registry. */
const deliveriesCounter = (registry: AppDeps['metrics']): Counter<'outcome'> =>
  metricOnce(
    registry,
    'webhook_deliveries_total',
    () =>
      new Counter({
        name: 'webhook_deliveries_total',
        help: 'Webhook delivery attempts by outcome: delivered, retried (waits its next attempt), failed (the last attempt failed).',
        labelNames: ['outcome'] as const,
        registers: [registry],
      }),
  );

/** The failure of a delivery whose endpoint's sealed secret does not open (APP_SECRET changed): rotating the secret mends it. */
const UNOPENED_SECRET = "the endpoint's signing secret does not open with this APP_SECRET: rotate the secret";

/**
 * What disabling endpoints entails beyond the lane (their unfinished deliveries failed, the
 * account told), run in the transaction that disables them: the webhooks module's, given at
 * composition.
 */
export type OnEndpointsDisabled = (trx: Db, now: Date, endpoints: DisabledEndpoint[]) => Promise<void>;

/** At most `n` tasks of a group at once: `run` waits for a free slot. */
function slots(n: number) {
  let free = n;
  const waiting: Array<() => void> = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (free > 0) free--;
    else await new Promise<void>((r) => waiting.push(r));
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else free++;
    }
  };
}

/**
 * The webhook delivery lane, the twin of the mail lane: it claims a batch of due deliveries,
 * signs each event (Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature`)
 * and posts it over kept-alive connections, with bounded concurrency per endpoint and overall,
 * and writes the outcomes in batches (`settleAttempts`, through the group-commit batcher). A round
 * that claims nothing deletes a bounded batch of finished events older than 30 days. A crash
 * loses nothing: leases run out and the deliveries are posted again, with the same `webhook-id`.
 * Endpoints it disables are handed to `onDisabled`. Time comes only from `deps.clock`.
 */
export function webhookLane(
  deps: AppDeps,
  owner: string,
  onDisabled: OnEndpointsDisabled,
  opts: WebhookLaneOptions = {},
): Lane<ClaimedDelivery> {
  const batchSize = opts.batchSize ?? 200;
  const perEndpoint = opts.perEndpoint ?? 10;
  const flushSize = opts.flushSize ?? 100;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const { clock, log } = deps;
  const db = deps.database.db;
  const counter = deliveriesCounter(deps.metrics);
  const poster = createPoster({ allowPrivate: opts.allowPrivate ?? deps.config.webhooksAllowPrivate, maxSockets: perEndpoint, timeoutMs });
  const overall = slots(opts.concurrency ?? 50);

  /**
   * The outcomes of attempts, written `flushSize` at a time as they fill (and on the runner's
   * flush): one write at a time; a failed write keeps them for the next.
   */
  const outcomes = batcher<AttemptOutcome>(
    async (batch) => {
      const now = clock.now();
      try {
        const settled = await settleAttempts(db, owner, now, batch, (trx, endpoints) => onDisabled(trx, now, endpoints));
        counter.inc({ outcome: 'delivered' }, settled.delivered);
        counter.inc({ outcome: 'retried' }, settled.retried);
        counter.inc({ outcome: 'failed' }, settled.failed);
        for (const e of settled.disabled) {
          log.warn(
            { worker: owner, endpointId: e.id, userId: e.user_id, url: maskedUrl(e.url), failingSince: e.failing_since },
            'webhook endpoint disabled: every attempt failed for 5 days',
          );
        }
      } catch (err) {
        log.error({ err, worker: owner }, 'webhooks: outcomes not written; kept for the next write');
        throw err;
      }
    },
    { start: 'flush', onFailure: 'keep', full: (waiting) => waiting.length >= flushSize },
  );

  /** Signs and posts one delivery, and hands its outcome to the batcher; without a signer (its secret does not open) it fails. */
  const attempt = async (d: ClaimedDelivery, sign: Signer | null, ctx: WorkContext): Promise<void> => {
    if (ctx.stopping()) return;
    ctx.handedOver(d.id);
    if (!sign) {
      void outcomes.add({ delivery: d, statusCode: null, error: UNOPENED_SECRET, durationMs: 0 });
      return;
    }
    const r = await poster.post(d.url, sign(d.event_id, clock.now(), d.body), d.body);
    void outcomes.add({ delivery: d, ...r });
  };

  return {
    name: 'webhooks',
    channel: WEBHOOK_CHANNEL,
    // Requests under way end within their time limit, and none starts once the runner stops.
    stopWithinMs: timeoutMs + 1000,
    startLog: { batchSize, perEndpoint },
    leases: {
      claim: (worker, now, leaseMs) => claimDueDeliveries(db, worker, now, batchSize, leaseMs),
      renew: (worker, now, leaseMs) => renew(db, DELIVERY_QUEUE, worker, now, leaseMs),
      release: (worker, now, ids) => release(db, DELIVERY_QUEUE, worker, now, ids),
    },
    async work(rows, ctx) {
      const byEndpoint = new Map<number, ClaimedDelivery[]>();
      for (const r of rows) byEndpoint.set(r.endpoint_id, [...(byEndpoint.get(r.endpoint_id) ?? []), r]);
      await Promise.all(
        [...byEndpoint.values()].map((group) => {
          const secret = unseal(deps.config.appSecret, WEBHOOK_SECRET, group[0].secret);
          const sign = secret === null ? null : webhookSigner(secret);
          const lane = slots(perEndpoint);
          return Promise.all(group.map((d) => lane(() => overall(() => attempt(d, sign, ctx)))));
        }),
      );
    },
    flush: () => outcomes.flush(),
    async whenIdle(now) {
      await pruneEvents(db, now, opts.pruneLimit ?? 1000);
    },
    nextDueAt: () => nextDeliveryDueAt(db),
    close: () => poster.close(),
  };
}
