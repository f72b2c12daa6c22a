import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { FastifyBaseLogger } from 'fastify';
import type { Database, Db } from '../db/index.js';
import { engineOf, epochMsNow } from '../db/dialect.js';
import { TransportError, type MailMessage, type Relay, type SendResult, type Transport } from './transport.js';

/** The first pause of a relay that throttles or cannot be reached; each pause in a row doubles it. */
export const PAUSE_FIRST_MS = 1000;
/** The longest pause. */
export const PAUSE_MAX_MS = 5 * 60_000;
/**
 * Slots are spaced for 10% under the configured rate: a message sent late (a busy event loop, a
 * slow connection, a relay that answers in bursts) then still lands within the promised windows
 * (`rate` + 1 messages in any second) instead of next to the following slot. A first version kept
 * 1% of room; on a loaded machine two workers at 20/s then put 22 messages into one second at the
 * relay (the CI run caught it), so the never-exceed promise now wins over the last 9% of throughput.
 */
export const RATE_MARGIN = 0.9;
/**
 * How late after its slot a message may still start at `rate`. Slots are `S = 1000 / (rate ×
 * RATE_MARGIN)` ms apart, so at most ⌊1000 / S⌋ + 1 slots fall in a second; starts up to `late`
 * after their slot keep that count while late < S × (⌊1000 / S⌋ + 1) − 1000 (10 ms at 20/s, 5 ms at
 * 200/s); 80% of it, and the rest of the promised room goes to the messages in flight (`lanesFor`).
 */
export function lateMsFor(rate: number): number {
  const slot = 1000 / (rate * RATE_MARGIN);
  return 0.8 * (slot * (Math.floor(1000 / slot) + 1) - 1000);
}

/**
 * How many messages one worker has with a rate-limited relay at once: a message that stalls (a
 * connection being opened, a slow answer) reaches the relay together with those sent after it, so
 * the messages in flight are what can bunch up. The margin leaves `rate × (1 − RATE_MARGIN)`
 * messages of room in a second (2 at 20/s, 20 at 200/s), shared by two workers: 1 lane each at
 * 20/s, 10 at 200/s. The next message of a full worker takes its slot only when one is accepted.
 */
export function lanesFor(rate: number): number {
  return Math.max(1, Math.floor((rate * (1 - RATE_MARGIN)) / 2));
}

/** Waits for a free lane of a rate-limited relay (see `lanesFor`). */
function enterLane(k: Known, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (k.busy < k.lanes) {
      k.busy++;
      return resolve();
    }
    const go = () => {
      signal.removeEventListener('abort', abort);
      k.busy++;
      resolve();
    };
    const abort = () => {
      const i = k.waiting.indexOf(go);
      if (i >= 0) k.waiting.splice(i, 1);
      reject(new RelayWaitAborted());
    };
    k.waiting.push(go);
    signal.addEventListener('abort', abort, { once: true });
  });
}

/** Frees a lane for the next waiting message. */
function leaveLane(k: Known): void {
  k.busy--;
  k.waiting.shift()?.();
}

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

/** The worker stopped while the message waited for a relay: it was not handed to any server. */
export class RelayWaitAborted extends Error {}

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
}

const byRegistry = new WeakMap<Registry, RelayMetrics>();

/** The relays' metrics on the app's registry, created once per registry. */
function relayMetrics(registry: Registry, db: Db, relays: readonly Relay[]): RelayMetrics {
  let m = byRegistry.get(registry);
  if (m) return m;
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
  m = {
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
  };
  byRegistry.set(registry, m);
  return m;
}

/** A relay row with the database's clock at the time of reading. */
interface RelayRow {
  name: string;
  next_at: number;
  paused_until: number;
  pause_ms: number;
  now: number;
}

const numeric = (r: RelayRow): RelayRow => ({
  name: r.name,
  next_at: Number(r.next_at),
  paused_until: Number(r.paused_until),
  pause_ms: Number(r.pause_ms),
  now: Number(r.now),
});

/** The shared state of the named relays, with the database's time. */
async function readRelays(db: Db, names: string[]): Promise<RelayRow[]> {
  const { rows } = await sql<RelayRow>`
    select name, next_at, paused_until, pause_ms, ${epochMsNow(engineOf(db))} as now
    from relays where name in (${sql.join(names)})`.execute(db);
  return rows.map(numeric);
}

/**
 * Takes the relay's next sending slot (GCRA): one conditional update moves `next_at` on by one
 * interval from the later of itself and now, unless the relay is paused. Returns the row after
 * the update (the slot is `next_at - interval`), or undefined when the relay is paused.
 */
async function takeSlot(db: Db, name: string, intervalMs: number): Promise<RelayRow | undefined> {
  const now = epochMsNow(engineOf(db));
  const { rows } = await sql<RelayRow>`
    update relays set next_at = (case when next_at > ${now} then next_at else ${now} end) + ${intervalMs}
    where name = ${name} and paused_until <= ${now}
    returning name, next_at, paused_until, pause_ms, ${now} as now`.execute(db);
  return rows[0] && numeric(rows[0]);
}

/**
 * Pauses a relay that is not paused yet: 1 s after it worked, else twice its last pause, at most
 * 5 min. Returns the row when this call began a pause (undefined: someone else's pause holds).
 */
async function pauseRelay(db: Db, name: string): Promise<RelayRow | undefined> {
  const now = epochMsNow(engineOf(db));
  const next = sql<number>`(case when pause_ms = 0 then ${PAUSE_FIRST_MS} when pause_ms * 2 > ${PAUSE_MAX_MS} then ${PAUSE_MAX_MS} else pause_ms * 2 end)`;
  const { rows } = await sql<RelayRow>`
    update relays set pause_ms = ${next}, paused_until = ${now} + ${next}
    where name = ${name} and paused_until <= ${now}
    returning name, next_at, paused_until, pause_ms, ${now} as now`.execute(db);
  return rows[0] && numeric(rows[0]);
}

/** Marks a relay as working again after its pause; true for the one caller that did. */
async function resumeRelay(db: Db, name: string): Promise<boolean> {
  const now = epochMsNow(engineOf(db));
  const { rows } =
    await sql`update relays set pause_ms = 0 where name = ${name} and pause_ms > 0 and paused_until <= ${now} returning name`.execute(db);
  return rows.length > 0;
}

/** Sleeps `ms` real milliseconds; an abort ends it with `RelayWaitAborted`. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new RelayWaitAborted());
    const done = () => {
      signal.removeEventListener('abort', abort);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(new RelayWaitAborted());
    };
    signal.addEventListener('abort', abort, { once: true });
  });
}

/** What one worker knows of a relay, in its own monotonic time (`performance.now()`). */
interface Known {
  relay: Relay;
  intervalMs: number | null;
  /** How late after its slot a message may still start (see `lateMsFor`). */
  lateMs: number;
  /** Messages of this worker with a rate-limited relay at once, at most (see `lanesFor`), and now. */
  lanes: number;
  busy: number;
  waiting: Array<() => void>;
  nextAt: number;
  pausedUntil: number;
  pauseMs: number;
}

/**
 * The dispatcher of a queue worker. A transport without relays (outbox, a test's transport) is
 * used as it is. With relays, the state each relay shares with every worker lives in its row of
 * `relays`: a rate-limited relay costs one conditional update per message (its slot); pauses are
 * read again at most every second (and at once when an update finds the relay paused). The rate
 * and pauses are real time, read from the database's clock (the same for every worker on it), not
 * from `deps.clock`: they are physical limits of a server, not schedules.
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
      const intervalMs = relay.rate ? 1000 / (relay.rate * RATE_MARGIN) : null;
      const [lateMs, lanes] = relay.rate ? [lateMsFor(relay.rate), lanesFor(relay.rate)] : [0, Infinity];
      return [relay.name, { relay, intervalMs, lateMs, lanes, busy: 0, waiting: [], nextAt: 0, pausedUntil: 0, pauseMs: 0 }];
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
    ready ??= db
      .insertInto('relays')
      .values(names.map((name) => ({ name })))
      .onConflict((oc) => oc.column('name').doNothing())
      .execute()
      .then(
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
        if (limited) await enterLane(k, signal);
        try {
          if (limited) {
            const asked = performance.now();
            const row = await takeSlot(db, k.relay.name, k.intervalMs!);
            if (!row) {
              // Paused by another worker since this one last looked.
              await refresh();
              continue;
            }
            learn(row);
            const slotAt = asked + (row.next_at - k.intervalMs! - row.now);
            const wait = slotAt - performance.now();
            if (wait > 0) await sleep(wait, signal);
            // Woken too late (a busy event loop): sending now would land next to the next slots'
            // messages. The slot is given up (capacity lost, never the rate broken) and a new one taken.
            if (performance.now() - slotAt > k.lateMs) continue;
          }
          onHand();
          const result = await transport.send(message, k.relay.name);
          metrics.sent.inc({ relay: k.relay.name });
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
          if (limited) leaveLane(k);
        }
      }
    },
  };
}
