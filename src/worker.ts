import Fastify from 'fastify';
import { loadConfig } from './config.js';
import { createDb } from './db/index.js';
import { migrateToLatest } from './db/migrate.js';
import { createTransport } from './delivery/transports.js';
import { createMetricsRegistry } from './ops/metrics.js';
import { systemClock } from './util/clock.js';
import { MAIL_KINDS } from './mail-kinds.js';
import { startWorker } from './queue/worker.js';
import { startWebhookWorker } from './modules/webhooks/webhooks.worker.js';
import { runEntry, StartError, stopOnSignals } from './ops/process.js';

/**
 * Process entry of `npm run worker`: a mail queue worker and a webhook worker, beside the servers and other
 * workers on the same PostgreSQL database (they share the queue with no coordinator). SQLite
 * has one worker, inside the server (`npm start`), so this refuses to run on it.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  if (!/^postgres(ql)?:\/\//.test(config.databaseUrl)) {
    throw new StartError(
      'npm run worker needs PostgreSQL (DATABASE_URL=postgres://…); on SQLite the one worker runs inside the server: npm start.',
    );
  }
  const database = createDb(config.databaseUrl, { server: true });
  await migrateToLatest(database.db);
  const transport = createTransport(config);
  // A Fastify instance only for its logger: the same log lines as the server's.
  const log = Fastify({ logger: { level: config.logLevel } }).log;
  const deps = { config, database, transport, log, metrics: createMetricsRegistry(), clock: systemClock };
  const worker = startWorker(deps, MAIL_KINDS);
  const webhooks = startWebhookWorker(deps);

  stopOnSignals(log, async () => {
    await Promise.all([worker.stop(), webhooks.stop()]);
    await transport.close();
    await database.close();
  });
}

runEntry(main);
