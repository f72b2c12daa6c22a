import { performance } from 'node:perf_hooks';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { FastifyBaseLogger } from 'fastify';
import type { Database, Db } from '../db/index.js';
import {
  ensureRelays,
  pauseRelay,
  PAUSE_FIRST_MS,
  readRelays,
  resumeRelay,
  spendRelayTurns,
  takeRelayTurn,
  type RelayRow,
} from './relay-state.js';
import { cameLate, Gate, lanesFor, RelayWaitAborted, sleep } from './relay-pacing.js';
import { TransportError, type MailMessage, type Relay, type SendResult, type Transport } from './transport.js';
import { metricOnce } from '../ops/metrics.js';

export { PAUSE_FIRST_MS, PAUSE_MAX_MS } from './relay-state.js';
export { RelayWaitAborted } from './relay-pacing.js';

/** How stale a worker's view of the relays' pauses may get before it reads them again. */
const REFRESH_MS = 1000;

/** All relays are paused: the message goes back to the queue for `waitMs` (real milliseconds). */
export class RelaysPaused extends Error {
  constructor(
    readonly waitMs: number,
    readonly lastError: string,
  ) {
    super(`every relay is paused (${lastError})`);
  }
}

/** A message accepted by a relay: `relay` names it when the transport has several (else null). */
export interface RelaySent extends SendResult {
  relay: string | null;
}

/** How a queue worker sends: through the relays, keeping their shared rates and pauses. */
export interface RelayDispatcher {
  /**
   * Sends one message through a relay that is up, waiting for a slot of its rate; `onHand` runs
   * right before the message goes to a server. A relay that throttles or is down is paused and the
   * message tries the next one. Throws `RelaysPaused` when every relay is paused, `RelayWaitAborted`
   * when `signal` ends a wait, or the relay's `TransportError`.
   */
  send(message: MailMessage, opts: { signal: AbortSignal; onHand: () => void }): Promise<RelaySent>;
}

/** Per-relay metrics on one registry. */
interface RelayMetrics {
  sent: Counter<'relay'>;
  deferred: Counter<'relay' | 'reason'>;
  pauses: Counter<'relay'>;
  lateTurns: Counter<'relay'>;
}

/** The relays' metrics on the app's registry, created once per registry. */
function relayMetrics(registry: Registry, db: Db, relays: readonly Relay[]): RelayMetrics {
  return metricOnce(registry, 'relays', () => makeRelayMetrics(registry, db, relays));
}

/** Makes the relays' metrics on `registry` (see `relayMetrics`). */
function makeRelayMetrics(registry: Registry, db: Db, relays: readonly Relay[]): RelayMetrics {
  new Gauge({
    name: 'relay_paused',
    help: 'Whether each SMTP relay is paused now (1) or up (0): read from the shared state at scrape time.',
    labelNames: ['relay'] as const,
    registers: [registry],
    async collect() {
      const rows = await readRelays(
        db,
        relays.map((r) => r.name),
      );
      for (const r of relays) {
        const row = rows.find((x) => x.name === r.name);
        this.set({ relay: r.name }, row && Number(row.paused_until) > Number(row.now) ? 1 : 0);
      }
    },
  });
  return {
    sent: new Counter({
      name: 'relay_messages_sent_total',
      help: 'Messages accepted, by relay.',
      labelNames: ['relay'] as const,
      registers: [registry],
    }),
    deferred: new Counter({
      name: 'relay_messages_deferred_total',
      help: 'Messages a relay did not take because it throttled or could not be reached (sent through another relay or later), by relay and reason.',
      labelNames: ['relay', 'reason'] as const,
      registers: [registry],
    }),
    pauses: new Counter({
      name: 'relay_pauses_total',
      help: 'Pauses of a relay (throttling or unreachable), by relay.',
      labelNames: ['relay'] as const,
      registers: [registry],
    }),
    lateTurns: new Counter({
      name: 'relay_late_messages_total',
      help: 'Messages of a rate-limited relay accepted more than an interval after their turn, each of which used up one more turn, by relay.',
      labelNames: ['relay'] as const,
      registers: [registry],
    }),
  };
}

/** What one worker knows of a relay, in its own monotonic time (`performance.now()`). */
interface Known {
  relay: Relay;
  /** The time between two turns (1000 / rate ms), and how late a message may take its turn; null: unlimited. */
  intervalMs: number | null;
  toleranceMs: number;
  /** This worker's messages with the relay, from their turn until accepted (see `lanesFor`). */
  lanes: Gate;
  /** How long after their turns the relay accepted this worker's last messages (see `cameLate`). */
  delays: number[];
  nextAt: number;
  pausedUntil: number;
  pauseMs: number;
}

/**
 * The dispatcher of a queue worker. A transport without relays (outbox, a test's transport) is
 * used as it is. With relays, the state each relay shares with every worker lives in its row of
 * `relays`: a rate-limited relay costs one conditional update per message (its GCRA turn), and
 * one more for a message that reached the relay late; pauses are read again at most every second
 * (and at once when an update finds the relay paused). The rate and pauses are real time, read
 * from the database's clock (the same for every worker on it), not from `deps.clock`: they are
 * physical limits of a server, not schedules.
 */
export function relayDispatcher(
  deps: { transport: Transport; database: Database; log: FastifyBaseLogger; metrics: Registry },
  workerId: string,
): RelayDispatcher {
  const { transport, log } = deps;
  const relays = transport.relays;
  if (!relays || relays.length === 0) {
    return {
      async send(message, { onHand }) {
        onHand();
        return { ...(await transport.send(message)), relay: null };
      },
    };
  }
  const db = deps.database.db;
  const names = relays.map((r) => r.name);
  const metrics = relayMetrics(deps.metrics, db, relays);
  const known = new Map<string, Known>(
    relays.map((relay) => {
      // A tolerance of one interval: see `takeRelayTurn`.
      const intervalMs = relay.rate ? 1000 / relay.rate : null;
      const toleranceMs = intervalMs ?? 0;
      const lanes = new Gate(relay.rate ? lanesFor(relay.rate) : Infinity);
      return [relay.name, { relay, intervalMs, toleranceMs, lanes, delays: [], nextAt: 0, pausedUntil: 0, pauseMs: 0 }];
    }),
  );
  let refreshedAt = -Infinity;
  let ready: Promise<void> | null = null;
  let turn = 0;

  /** A row's database times, as this process's monotonic times. */
  const learn = (row: RelayRow) => {
    const k = known.get(row.name);
    if (!k) return;
    const local = performance.now() - row.now;
    k.nextAt = row.next_at + local;
    k.pausedUntil = row.paused_until + local;
    k.pauseMs = row.pause_ms;
  };
  const refresh = async () => {
    ready ??= ensureRelays(db, names).then(
      () => undefined,
      (err) => {
        ready = null;
        throw err;
      },
    );
    await ready;
    for (const row of await readRelays(db, names)) learn(row);
    refreshedAt = performance.now();
  };

  /** The relay to try: one that can send now, in turn; else the rate-limited one free soonest; null if all are paused. */
  const choose = (now: number): Known | null => {
    const up = [...known.values()].filter((k) => k.pausedUntil <= now);
    if (up.length === 0) return null;
    const free = up.filter((k) => k.intervalMs === null || k.nextAt <= now);
    if (free.length > 0) return free[turn++ % free.length];
    return up.reduce((a, b) => (b.nextAt < a.nextAt ? b : a));
  };

  /**
   * Takes the relay's next turn (one atomic update: the database decides, on its clock, so the
   * workers' clocks never matter) and waits for it. Returns when the turn was, in this process's
   * time, or null when the relay turned out paused.
   */
  const takeTurn = async (k: Known, signal: AbortSignal): Promise<number | null> => {
    const row = await takeRelayTurn(db, k.relay.name, { intervalMs: k.intervalMs!, toleranceMs: k.toleranceMs });
    if (!row) {
      await refresh();
      return null;
    }
    const turnAt = performance.now() + (row.next_at - k.intervalMs! - row.now);
    learn(row);
    const wait = turnAt - performance.now();
    if (wait > 0) await sleep(wait, signal);
    return turnAt;
  };

  /**
   * After a message was accepted `delayMs` after its turn. One that came late (a connection being
   * opened, a stall of the event loop) reached the relay among the messages of later turns, which
   * went on meanwhile: it also uses up the next turn, so that every window at the relay that holds
   * it also holds one turn fewer, and none holds more than the rate allows.
   */
  const accepted = async (k: Known, delayMs: number) => {
    if (!cameLate(k.delays, delayMs, k.intervalMs!)) return;
    metrics.lateTurns.inc({ relay: k.relay.name });
    await spendRelayTurns(db, k.relay.name, { intervalMs: k.intervalMs!, turns: 1 });
  };

  /** Pauses a relay that throttled or could not be reached (or learns the pause another worker began). */
  const paused = async (k: Known, err: TransportError) => {
    const reason = err.relayBusy ?? 'throttled';
    metrics.deferred.inc({ relay: k.relay.name, reason });
    // Whatever happens to the shared row, this worker leaves the relay alone for a while.
    k.pausedUntil = Math.max(k.pausedUntil, performance.now() + Math.max(PAUSE_FIRST_MS, k.pauseMs));
    const row = await pauseRelay(db, k.relay.name);
    if (row) {
      learn(row);
      metrics.pauses.inc({ relay: k.relay.name });
      log.warn({ worker: workerId, relay: k.relay.name, reason, pauseMs: row.pause_ms, error: err.message }, 'relay paused');
    } else {
      await refresh();
    }
  };

  /** After a success: the relay works again (logged once, by the worker whose update ends the pause). */
  const resumed = async (k: Known) => {
    k.pauseMs = 0;
    if (await resumeRelay(db, k.relay.name)) log.info({ worker: workerId, relay: k.relay.name }, 'relay resumed');
  };

  return {
    async send(message, { signal, onHand }) {
      let lastError = 'no relay answered';
      for (;;) {
        if (signal.aborted) throw new RelayWaitAborted();
        if (performance.now() - refreshedAt > REFRESH_MS) await refresh();
        const now = performance.now();
        const k = choose(now);
        if (!k) {
          const until = Math.min(...[...known.values()].map((x) => x.pausedUntil));
          throw new RelaysPaused(Math.max(0, Math.ceil(until - now)), lastError);
        }
        const limited = k.intervalMs !== null;
        if (limited) await k.lanes.enter(signal);
        try {
          const turnAt = limited ? await takeTurn(k, signal) : null;
          // Paused by another worker since this one last looked.
          if (limited && turnAt === null) continue;
          onHand();
          const result = await transport.send(message, k.relay.name);
          metrics.sent.inc({ relay: k.relay.name });
          if (turnAt !== null)
            await accepted(k, performance.now() - turnAt).catch((e) =>
              log.warn({ err: e, worker: workerId, relay: k.relay.name }, 'late turns not spent'),
            );
          // The message is accepted: a failure to record the resume must not make it look failed.
          if (k.pauseMs > 0)
            await resumed(k).catch((e) => log.warn({ err: e, worker: workerId, relay: k.relay.name }, 'relay resume not recorded'));
          return { ...result, relay: relays.length > 1 ? k.relay.name : null };
        } catch (err) {
          if (!(err instanceof TransportError && err.relayBusy)) throw err;
          lastError = `${k.relay.name}: ${err.message}`;
          // Not accepted: the message may go to another relay. A pause that cannot be written
          // leaves this worker's own view paused, and the message goes on.
          await paused(k, err).catch((e) => log.warn({ err: e, worker: workerId, relay: k.relay.name }, 'relay pause not recorded'));
        } finally {
          if (limited) k.lanes.leave();
        }
      }
    },
  };
}
