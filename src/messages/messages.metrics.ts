import { Counter, Gauge } from 'prom-client';
import type { AppDeps } from '../deps.js';
import { metricOnce } from '../ops/metrics.js';
import { countUnfinished } from './mail.queue.js';
import type { MailKinds } from './messages.kinds.js';

/** The queue's metrics on one registry. */
export interface QueueMetrics {
  sent: Counter<'kind'>;
  bounced: Counter<'kind'>;
  retried: Counter<'kind'>;
}

/**
 * The queue's metrics on the app's registry, created once per registry (a process may start and
 * stop several workers on one app). Rates (messages per second) come from the counters; the depth
 * gauge is read at scrape time with one grouped count over the unfinished rows (a partial index
 * holds exactly those), so an idle queue costs nothing between scrapes.
 */
export function queueMetrics(
  { metrics: registry, database, clock }: Pick<AppDeps, 'metrics' | 'database' | 'clock'>,
  kinds: MailKinds,
): QueueMetrics {
  return metricOnce(registry, 'mail_queue', () => makeQueueMetrics({ registry, database, clock }, kinds));
}

/** Makes the queue's metrics on `registry` (see `queueMetrics`). */
function makeQueueMetrics(
  { registry, database, clock }: { registry: AppDeps['metrics'] } & Pick<AppDeps, 'database' | 'clock'>,
  kinds: MailKinds,
): QueueMetrics {
  new Gauge({
    name: 'mail_queue_depth',
    help: 'Messages waiting in the mail queue, by state: queued (due now or later), sending (claimed by a worker).',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      const depth = await countUnfinished(database.db);
      for (const [state, n] of Object.entries(depth)) this.set({ state }, n);
    },
  });
  // A kind's own share of the queue (an automation's due steps and held mail): `<kind>_queue_depth`.
  for (const kind of kinds.values()) {
    const depth = kind.depth;
    if (!depth) continue;
    new Gauge({
      name: `${kind.name}_queue_depth`,
      help: depth.help,
      labelNames: ['state'] as const,
      registers: [registry],
      async collect() {
        for (const [state, n] of Object.entries(await depth.count(database.db, clock.now()))) this.set({ state }, n);
      },
    });
  }
  return {
    sent: new Counter({
      name: 'mail_messages_sent_total',
      help: 'Messages accepted by the SMTP server (or written to the outbox), by kind.',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    bounced: new Counter({
      name: 'mail_messages_bounced_total',
      help: 'Messages given up on: a permanent failure, or the last of the temporary ones, by kind.',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    retried: new Counter({
      name: 'mail_messages_retried_total',
      help: 'Temporary failures (4xx reply, dropped connection, timeout) put back to wait their backoff, by kind.',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
  };
}
