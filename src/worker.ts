import Fastify from 'fastify';
import { loadConfig } from './config.js';
import { createDb } from './db/index.js';
import { migrateToLatest } from './db/migrate.js';
import { createTransport } from './delivery/transports.js';
import { createMetricsRegistry } from './ops/metrics.js';
import { systemClock } from './util/clock.js';
import { startJobs } from './lanes.js';
import { runEntry, StartError, stopOnSignals } from './ops/process.js';
import { MEMBERSHIP_LISTENERS } from './membership-listeners.js';

/**
 * Process entry of `npm run worker`: the job runner (scheduler, mail and webhook lanes), beside the
 * servers and other workers on the same PostgreSQL database (they share the queue with no
 * coordinator). SQLite has one runner, inside the server (`npm start`), so this refuses to run on it.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  if (!/^postgres(ql)?:\/\//.test(config.databaseUrl)) {
    throw new StartError(
      'npm run worker needs PostgreSQL (DATABASE_URL=postgres://…); on SQLite the one worker runs inside the server: npm start.',
    );
  }
  const database = createDb(config.databaseUrl, { server: true });
  await migrateToLatest(database.db, { appSecret: config.appSecret });
  const transport = createTransport(config);
  // A Fastify instance only for its logger: the same log lines as the server's.
  const log = Fastify({ logger: { level: config.logLevel } }).log;
  const deps = {
    config,
    database,
    transport,
    log,
    metrics: createMetricsRegistry(),
    clock: systemClock,
    membershipListeners: MEMBERSHIP_LISTENERS,
  };
  const jobs = startJobs(deps);

  stopOnSignals(log, async () => {
    await jobs.stop();
    await transport.close();
    await database.close();
  });
}

runEntry(main);
