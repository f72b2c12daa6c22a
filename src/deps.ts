import type { FastifyBaseLogger } from 'fastify';
import type { Registry } from 'prom-client';
import type { Config } from './config.js';
import type { Database, Db } from './db/index.js';
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
  /**
   * Who is told of every change of segment membership, in the transaction that made it: the
   * service's list is `src/membership-listeners.ts` (automations enrol who joined).
   */
  membershipListeners: readonly MembershipListener[];
}

/**
 * A change of segment membership that may have brought members to the account's `segmentIds`
 * (a change that only removes members is not published): only `contactIds` may have joined when
 * they are given; any member, hand-added ones too, when not.
 */
export interface MembershipChange {
  userId: number;
  segmentIds: readonly number[];
  contactIds?: readonly number[];
}

/**
 * Hears of a change of segment membership in the transaction that made it, under the account's
 * membership lock, once the members are up to date. Segments publish (they import no listener);
 * the modules that follow segments subscribe.
 */
export type MembershipListener = (trx: Db, deps: AppDeps, change: MembershipChange) => Promise<void>;

/**
 * What buildApp takes: without a `transport` it creates one from the configuration and closes it
 * with the app; a given transport belongs to the caller, who closes it. Without `metrics` it
 * creates a fresh registry; without `clock` it reads the system clock; without
 * `membershipListeners` it takes the service's.
 */
export type AppInput = Omit<AppDeps, 'transport' | 'log' | 'metrics' | 'clock' | 'membershipListeners'> &
  Partial<Pick<AppDeps, 'transport' | 'log' | 'metrics' | 'clock' | 'membershipListeners'>>;
