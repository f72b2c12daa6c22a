import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Counter, type Registry } from 'prom-client';
import { Webhook } from 'standardwebhooks';
import type { AppDeps } from '../../deps.js';
import { WEBHOOK_CHANNEL } from '../../events/outbox.js';
import { idleWait } from '../../queue/idle.js';
import { endpointsDisabled } from './webhooks.mail.js';
import { createPoster } from './webhooks.post.js';
import {
  claimDueDeliveries,
  nextDeliveryDueAt,
  pruneEvents,
  releaseDeliveries,
  renewDeliveryLeases,
  settleAttempts,
  type AttemptOutcome,
  type ClaimedDelivery,
} from './webhooks.queue.js';

/** How a webhook worker claims, posts and waits; every field has a default. */
export interface WebhookWorkerOptions {
  /** The lease owner written on claimed rows (default: host, pid and a random tag). */
  id?: string;
  /** Deliveries claimed per batch (default 200). */
  batchSize?: number;
  /** Requests under way at once, over all endpoints (default 50). */
  concurrency?: number;
  /** Requests under way at once to one endpoint (default 10). */
  perEndpoint?: number;
  /** Outcomes written per database write (default 100). */
  flushSize?: number;
  /** How long a claim holds a delivery (default 60 s); renewed every third of it while the batch runs. */
  leaseMs?: number;
  /** Idle wait between polls when no notification can wake the worker (SQLite; default 1 s). */
  pollMs?: number;
  /** Longest idle wait on PostgreSQL while the listener hears notifications (default 30 s). */
  idleMaxMs?: number;
  /** Finished events older than 30 days deleted per idle tick (default 1000). */
  pruneLimit?: number;
  /** Connections may go to private addresses (default: the `WEBHOOKS_ALLOW_PRIVATE` setting). */
  allowPrivate?: boolean;
  /** Time limit of one attempt (default 10 s). */
  timeoutMs?: number;
  /** Run ticks in the background (default true); false: the caller drives `tick()` (tests). */
  loop?: boolean;
}

/** A running webhook worker. */
export interface WebhookWorker {
  readonly id: string;
  /** One round: claim a batch, post each, write the outcomes; an idle round prunes old events. Returns how many it claimed. */
  tick(): Promise<number>;
  /** Stops claiming, lets the requests under way finish (each is limited in time), releases the rest. */
  stop(): Promise<void>;
}

const metricsByRegistry = new WeakMap<Registry, Counter<'outcome'>>();

/** `webhook_deliveries_total{outcome}` on a registry, created once per registry. */
function deliveriesCounter(registry: Registry): Counter<'outcome'> {
  let c = metricsByRegistry.get(registry);
  if (!c) {
    c = new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome: delivered, retried (waits its next attempt), failed (the last attempt failed).',
      labelNames: ['outcome'] as const,
      registers: [registry],
    });
    metricsByRegistry.set(registry, c);
  }
  return c;
}

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
 * Starts a webhook delivery worker, the twin of the mail queue's: each tick claims a batch of due
 * deliveries with a lease, signs each event (Standard Webhooks: `webhook-id`, `webhook-timestamp`,
 * `webhook-signature`) and posts it over kept-alive connections, with bounded concurrency per
 * endpoint and overall, and writes the outcomes in batches (`settleAttempts`). A tick that claims
 * nothing deletes a bounded batch of finished events older than 30 days. With `loop` (the
 * default) ticks run back to back while there is work; when idle the worker waits for a
 * PostgreSQL notification on the webhook channel, the next due time, or a poll interval. A
 * crash loses nothing: leases run out and the deliveries are posted again, with the same
 * `webhook-id`. Time comes only from `deps.clock`.
 */
export function startWebhookWorker(deps: AppDeps, opts: WebhookWorkerOptions = {}): WebhookWorker {
  const id = opts.id ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const batchSize = opts.batchSize ?? 200;
  const perEndpoint = opts.perEndpoint ?? 10;
  const flushSize = opts.flushSize ?? 100;
  const leaseMs = opts.leaseMs ?? 60_000;
  const pollMs = opts.pollMs ?? 1000;
  const idleMaxMs = opts.idleMaxMs ?? 30_000;
  const { database, clock, log } = deps;
  const db = database.db;
  const counter = deliveriesCounter(deps.metrics);
  const poster = createPoster({
    allowPrivate: opts.allowPrivate ?? deps.config.webhooksAllowPrivate,
    maxSockets: perEndpoint,
    timeoutMs: opts.timeoutMs,
  });
  const overall = slots(opts.concurrency ?? 50);

  let stopping = false;
  let current: Promise<number> | null = null;
  /** Claimed and not yet posted: released on stop. */
  const notPosted = new Set<number>();
  let outcomes: AttemptOutcome[] = [];
  let flushing: Promise<void> = Promise.resolve();

  /** Writes the buffered outcomes; one write at a time. A failed write keeps them for the next. */
  const flush = (): Promise<void> =>
    (flushing = flushing.then(async () => {
      const batch = outcomes;
      outcomes = [];
      if (batch.length === 0) return;
      const now = clock.now();
      try {
        const settled = await settleAttempts(db, id, now, batch, (trx, endpoints) => endpointsDisabled(trx, deps, now, endpoints));
        counter.inc({ outcome: 'delivered' }, settled.delivered);
        counter.inc({ outcome: 'retried' }, settled.retried);
        counter.inc({ outcome: 'failed' }, settled.failed);
        for (const e of settled.disabled) {
          log.warn(
            { worker: id, endpointId: e.id, userId: e.user_id, url: e.url, failingSince: e.failing_since },
            'webhook endpoint disabled: every attempt failed for 5 days',
          );
        }
      } catch (err) {
        log.error({ err, worker: id }, 'webhooks: outcomes not written; kept for the next write');
        outcomes.push(...batch);
      }
    }));

  /** Signs and posts one delivery, and buffers its outcome. */
  const attempt = async (d: ClaimedDelivery, signer: Webhook): Promise<void> => {
    if (stopping) return;
    notPosted.delete(d.id);
    const at = clock.now();
    const headers = {
      'user-agent': 'Campaign-API-Webhooks',
      'webhook-id': d.event_id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signer.sign(d.event_id, at, d.body),
    };
    const r = await poster.post(d.url, headers, d.body);
    outcomes.push({ delivery: d, ...r });
    if (outcomes.length >= flushSize) void flush();
  };

  const runTick = async (): Promise<number> => {
    if (stopping) return 0;
    const rows = await claimDueDeliveries(db, id, clock.now(), batchSize, leaseMs);
    if (rows.length === 0) {
      await pruneEvents(db, clock.now(), opts.pruneLimit ?? 1000);
      return 0;
    }
    for (const r of rows) notPosted.add(r.id);
    const renew = setInterval(() => {
      renewDeliveryLeases(db, id, clock.now(), leaseMs).catch((err) => log.warn({ err, worker: id }, 'webhooks: lease not renewed'));
    }, leaseMs / 3);
    renew.unref();
    try {
      const byEndpoint = new Map<number, ClaimedDelivery[]>();
      for (const r of rows) byEndpoint.set(r.endpoint_id, [...(byEndpoint.get(r.endpoint_id) ?? []), r]);
      await Promise.all(
        [...byEndpoint.values()].map((group) => {
          const signer = new Webhook(group[0].secret);
          const lane = slots(perEndpoint);
          return Promise.all(group.map((d) => lane(() => overall(() => attempt(d, signer)))));
        }),
      );
      await flush();
      if (notPosted.size > 0) await releaseDeliveries(db, id, clock.now(), [...notPosted]);
      notPosted.clear();
    } finally {
      clearInterval(renew);
    }
    return rows.length;
  };

  const tick = (): Promise<number> => {
    const run = (current ?? Promise.resolve(0)).catch(() => 0).then(runTick);
    current = run;
    return run;
  };

  // Idle waiting: a notification, a stop, or the timer ends it; a notification during a tick is remembered.
  const idler = idleWait(opts.loop !== false ? database.listener : null, WEBHOOK_CHANNEL);

  const loop = async () => {
    while (!stopping) {
      idler.reset();
      try {
        if ((await tick()) > 0) continue;
        let wait = database.listener?.isListening() ? idleMaxMs : pollMs;
        const due = await nextDeliveryDueAt(db);
        if (due) wait = Math.min(wait, due.getTime() - clock.now().getTime());
        // A floor: deliveries due but held by another worker's claim must not spin this one.
        await idler.wait(Math.max(50, wait));
      } catch (err) {
        log.error({ err, worker: id }, 'webhooks: tick failed; trying again shortly');
        await idler.wait(pollMs);
      }
    }
  };

  let looping: Promise<void> | null = null;
  if (opts.loop !== false) {
    log.info({ worker: id, batchSize, perEndpoint }, 'webhook worker started');
    looping = loop();
  }

  return {
    id,
    tick,
    async stop() {
      if (stopping) return;
      stopping = true;
      idler.stop();
      // Requests under way end within their time limit; none starts after this.
      await (looping ?? current ?? Promise.resolve()).then(
        () => undefined,
        () => undefined,
      );
      await flush();
      await releaseDeliveries(db, id, clock.now(), [...notPosted]).catch((err) =>
        log.warn({ err, worker: id }, 'webhooks: leases not released'),
      );
      notPosted.clear();
      poster.close();
      if (looping) log.info({ worker: id }, 'webhook worker stopped');
    },
  };
}
