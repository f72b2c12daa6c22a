import type { FastifyBaseLogger } from 'fastify';
import type { Registry } from 'prom-client';
import type { Config } from './config.js';
import type { Database } from './db/index.js';
import type { Transport } from './delivery/transport.js';
import type { Clock } from './util/clock.js';

/**
 * What the app and the engine are given from outside: configuration, an open and migrated
 * database, the mail transport, a logger and the metrics registry. It lives apart from `app.ts`
 * so that services can name it without importing the composition root.
 */
export interface AppDeps {
  config: Config;
  database: Database;
  /** Where every mail goes (SMTP pool or outbox files); see `AppInput`. */
  transport: Transport;
  /** Fastify's logger option: `false` (none), `true`, or pino options such as `{ level, stream }`. */
  logger?: boolean | object;
  /** The app's logger, for work outside a request (background mail); set by buildApp. */
  log: FastifyBaseLogger;
  /**
   * This app's Prometheus registry, scraped at `/metrics`. The HTTP metrics are registered on it;
   * other parts of the process add theirs with `registers: [deps.metrics]`. One per app, so that
   * several apps in one process (tests) keep separate counts.
   */
  metrics: Registry;
  /** Where the engine reads the time (schedules, waits, retries): a controllable clock in tests. */
  clock: Clock;
}

/**
 * What buildApp takes: without a `transport` it creates one from the configuration and closes it
 * with the app; a given transport belongs to the caller, who closes it. Without `metrics` it
 * creates a fresh registry; without `clock` it reads the system clock.
 */
export type AppInput = Omit<AppDeps, 'transport' | 'log' | 'metrics' | 'clock'> &
  Partial<Pick<AppDeps, 'transport' | 'log' | 'metrics' | 'clock'>>;
