import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { AppDeps } from '../deps.js';
import type { QueuedMessage } from '../db/types.js';
import { classifyBounce } from '../delivery/bounce-classes.js';
import { SMTP_POOL_CONNECTIONS } from '../delivery/transports.js';
import { relayDispatcher, RelaysPaused, RelayWaitAborted } from '../delivery/relays.js';
import { TransportError, type MailMessage, type Rendered, type Transport } from '../delivery/transport.js';
import { idleWait } from './idle.js';
import { queueMetrics } from './queue.metrics.js';
import {
  QUEUE_CHANNEL,
  claimDue,
  markBounced,
  markDeferred,
  markRetry,
  markSent,
  markSkipped,
  nextDueAt,
  releaseLeases,
  renewLeases,
  selectBouncedAmong,
  type Bounced,
} from './queue.queries.js';
import type { MailKinds } from './queue.types.js';

/** How a worker claims, sends and waits; every field has a default. */
export interface WorkerOptions {
  /** The lease owner written on claimed rows; unique per worker (default: host, pid and a random tag). */
  id?: string;
  /** Messages claimed per batch (default 100). */
  batchSize?: number;
  /** Messages handed to the transport at once (default: the connections of its relays' pools, else 5). */
  concurrency?: number;
  /** Sent messages marked per database write (default 10). */
  flushSize?: number;
  /** How long a claim holds a message (default 60 s); renewed every third of it while the worker works. */
  leaseMs?: number;
  /** Idle wait between polls when no notification can wake the worker (SQLite; default 1 s). */
  pollMs?: number;
  /** Longest idle wait on PostgreSQL while the listener hears notifications (default 30 s; a safety net). */
  idleMaxMs?: number;
  /** How long `stop()` waits for messages handed to the transport (default 5 s). */
  stopTimeoutMs?: number;
  /** Run ticks in the background (default true); false: the caller drives `tick()` (tests). */
  loop?: boolean;
}

/** A running queue worker. */
export interface Worker {
  readonly id: string;
  /**
   * The most messages that can be handed to the SMTP server and not yet marked sent at any
   * moment: a worker hands a new message over only while fewer than `2 × flushSize` accepted ones
   * wait for their mark, and at most `concurrency` are with the transport, so the bound is
   * `concurrency + 2 × flushSize` (one less, exactly). A crash re-sends at most this many.
   */
  readonly inFlightWindow: number;
  /** One round: start due work, claim a batch, render, send, mark, settle. Returns how many messages it claimed. */
  tick(): Promise<number>;
  /** Stops claiming, lets messages handed to the transport finish (bounded), releases the rest. */
  stop(): Promise<void>;
}

/** Sent messages marked per database write, by default. */
const FLUSH_SIZE = 10;

/** The in-flight window of a worker with these options (see `Worker.inFlightWindow`). */
export function inFlightWindow(opts: Pick<WorkerOptions, 'concurrency' | 'flushSize'> = {}): number {
  return (opts.concurrency ?? SMTP_POOL_CONNECTIONS) + 2 * (opts.flushSize ?? FLUSH_SIZE);
}

/** Messages a transport takes at once: the connections of its relays' pools, or one pool's. */
function connectionsOf(transport: Transport): number {
  return transport.relays?.reduce((n, r) => n + r.connections, 0) || SMTP_POOL_CONNECTIONS;
}

/** A fresh lease owner name: readable in the table (host and pid), unique thanks to the tag. */
function workerName(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err)) || 'unknown error';

/** The earlier of two times (null: none). */
const earliest = (a: Date | null, b: Date | null) => (a && b ? (a < b ? a : b) : (a ?? b));

/**
 * Starts a mail queue worker on the app's dependencies. Each tick asks every kind of mail to start
 * what came due, claims a batch of due messages with a lease, renders each through its kind,
 * sends through `deps.transport` with bounded concurrency, and marks each message only after the
 * transport resolved (sent), or failed (retried with backoff, or bounced). Marks are written in
 * small batches; the in-flight window is what a crash can send twice. With `loop` (the default)
 * ticks run back to back while there is work; when idle the worker waits for a PostgreSQL
 * notification on the queue channel, the next known due time, or a poll interval. Time comes
 * only from `deps.clock`.
 */
export function startWorker(deps: AppDeps, kinds: MailKinds, opts: WorkerOptions = {}): Worker {
  const id = opts.id ?? workerName();
  const batchSize = opts.batchSize ?? 100;
  const concurrency = opts.concurrency ?? connectionsOf(deps.transport);
  const flushSize = opts.flushSize ?? FLUSH_SIZE;
  const leaseMs = opts.leaseMs ?? 60_000;
  const pollMs = opts.pollMs ?? 1000;
  const idleMaxMs = opts.idleMaxMs ?? 30_000;
  const stopTimeoutMs = opts.stopTimeoutMs ?? 5000;
  const { database, clock, log } = deps;
  const db = database.db;
  const metrics = queueMetrics(deps, kinds);
  const relays = relayDispatcher(deps, id);
  /** Ends the waits for a relay's slot or pause when the worker stops. */
  const stopWaits = new AbortController();

  let stopping = false;
  let current: Promise<number> | null = null;
  /** Claimed by this worker and not yet handed to the transport: released on stop. */
  const notHanded = new Set<number>();
  const kindOf = new Map<number, string>();
  let sent: Array<{ id: number; messageId: string; relay: string | null }> = [];
  let retries: Array<{ id: number; error: string }> = [];
  let deferrals: Array<{ id: number; error: string; until: Date }> = [];
  let bounces: Array<{ id: number; error: string }> = [];
  let skips: Array<{ id: number; state: 'suppressed' | 'cancelled'; reason: string }> = [];
  let flushing: Promise<void> = Promise.resolve();
  /** Messages the transport accepted whose `sent` mark is not written yet. */
  let unmarked = 0;

  /** One log line per bounce: the address, the server's answer, and hard (the address is suppressed) or soft. */
  const logBounce = (m: Bounced, type: 'hard' | 'soft') =>
    log.info({ worker: id, messageId: m.id, kind: m.kind, email: m.email, type, reason: m.last_error }, 'mail bounced');

  /** Writes the buffered outcomes; one write at a time, in order. A failed write keeps them for the next. */
  const flush = (): Promise<void> =>
    (flushing = flushing.then(async () => {
      const batch = { sent, retries, bounces, skips, deferrals };
      sent = [];
      retries = [];
      bounces = [];
      skips = [];
      deferrals = [];
      try {
        const now = clock.now();
        await markSkipped(db, id, now, batch.skips);
        batch.skips = [];
        await markSent(db, kinds, id, now, batch.sent);
        unmarked -= batch.sent.length;
        for (const s of batch.sent) metrics.sent.inc({ kind: kindOf.get(s.id) ?? 'unknown' });
        batch.sent = [];
        const outcome = await markRetry(db, kinds, id, now, batch.retries);
        for (const m of outcome.values()) {
          if (m.state === 'bounced') logBounce(m, 'soft');
          (m.state === 'bounced' ? metrics.bounced : metrics.retried).inc({ kind: m.kind });
        }
        batch.retries = [];
        for (const m of await markBounced(db, kinds, id, now, batch.bounces)) {
          logBounce(m, classifyBounce(null, m.last_error));
          metrics.bounced.inc({ kind: m.kind });
        }
        batch.bounces = [];
        await markDeferred(db, id, now, batch.deferrals);
        batch.deferrals = [];
      } catch (err) {
        log.error({ err, worker: id }, 'mail queue: marks not written; kept for the next write');
        sent.push(...batch.sent);
        retries.push(...batch.retries);
        bounces.push(...batch.bounces);
        skips.push(...batch.skips);
        deferrals.push(...batch.deferrals);
      }
    }));

  /**
   * Hands one rendered message to the transport and buffers its outcome. Accepted messages not yet
   * marked are what a crash would send again, so none is handed over while `2 × flushSize` of them
   * wait (one batch being written, one filling): the exposure stays within the in-flight window.
   * Marks are written in the background as each batch of `flushSize` fills, so sending goes on
   * during the write.
   */
  const sendOne = async (row: QueuedMessage, message: MailMessage) => {
    while (unmarked >= 2 * flushSize) {
      const before = unmarked;
      await flush();
      // The marks cannot be written (the database is away): stop sending; the tick fails and the
      // unsent messages come back when their lease ends.
      if (unmarked >= before) throw new Error('mail queue: sent marks cannot be written');
    }
    try {
      const r = await relays.send(message, { signal: stopWaits.signal, onHand: () => notHanded.delete(row.id) });
      sent.push({ id: row.id, messageId: r.messageId, relay: r.relay });
      unmarked++;
    } catch (err) {
      const error = errorText(err);
      if (err instanceof RelayWaitAborted) {
        // Stopping: the message went to no server; it is released with the others not handed over.
        notHanded.add(row.id);
        return;
      }
      notHanded.delete(row.id);
      if (err instanceof RelaysPaused) {
        // Every relay throttles or is down: the relays, not the message, failed, so no attempt is
        // counted; it waits in the queue (not in this worker) until the first pause ends.
        deferrals.push({ id: row.id, error, until: new Date(clock.now().getTime() + err.waitMs) });
      } else if (err instanceof TransportError && err.permanent) bounces.push({ id: row.id, error });
      else retries.push({ id: row.id, error });
    }
    // flush() never rejects (a failed write keeps its marks for the next), so it can run unawaited.
    if (sent.length >= flushSize || retries.length + bounces.length + deferrals.length >= flushSize) void flush();
  };

  /** Renders the rows of each kind through its kind; a renderer that throws makes its rows temporary failures. */
  const render = async (rows: QueuedMessage[]): Promise<Array<{ row: QueuedMessage; message: MailMessage }>> => {
    const ready: Array<{ row: QueuedMessage; message: MailMessage }> = [];
    const byKind = new Map<string, QueuedMessage[]>();
    for (const r of rows) byKind.set(r.kind, [...(byKind.get(r.kind) ?? []), r]);
    for (const [kind, group] of byKind) {
      const render = kinds.get(kind)?.render;
      if (!render) {
        // Written by a newer version, or by hand: nothing here can render it.
        for (const r of group) skips.push({ id: r.id, state: 'cancelled', reason: `unknown kind of mail: ${kind}` });
        continue;
      }
      let out: Rendered[];
      try {
        out = await render(deps, group);
      } catch (err) {
        log.error({ err, kind, worker: id }, 'mail queue: rendering failed; the messages wait their backoff');
        for (const r of group) retries.push({ id: r.id, error: `rendering failed: ${errorText(err)}` });
        continue;
      }
      group.forEach((row, i) => {
        const o = out[i];
        if (!o) retries.push({ id: row.id, error: 'rendering returned nothing' });
        else if ('skip' in o) skips.push({ id: row.id, state: o.skip, reason: o.reason });
        else ready.push({ row, message: o.message });
      });
    }
    return ready;
  };

  const runTick = async (): Promise<number> => {
    if (stopping) return 0;
    for (const kind of kinds.values()) await kind.beforeClaim?.(deps, clock.now());
    const rows = stopping ? [] : await claimDue(db, id, clock.now(), batchSize, leaseMs);
    if (rows.length > 0) {
      for (const r of rows) {
        notHanded.add(r.id);
        kindOf.set(r.id, r.kind);
      }
      const renew = setInterval(() => {
        renewLeases(db, id, clock.now(), leaseMs).catch((err) => log.warn({ err, worker: id }, 'mail queue: lease not renewed'));
      }, leaseMs / 3);
      renew.unref();
      try {
        // An address suppressed (or erased) for the account since the message was queued is not mailed.
        const bounced = await selectBouncedAmong(db, rows, deps.config.appSecret);
        const live = rows.filter((r) => {
          if (!bounced.has(`${r.user_id} ${r.email_key}`)) return true;
          skips.push({ id: r.id, state: 'suppressed', reason: 'the address bounced before' });
          notHanded.delete(r.id);
          return false;
        });
        const ready = await render(live);
        const handed = new Set(ready.map((x) => x.row.id));
        for (const r of live) if (!handed.has(r.id)) notHanded.delete(r.id);
        let next = 0;
        const runner = async () => {
          while (!stopping && next < ready.length) {
            const { row, message } = ready[next++];
            await sendOne(row, message);
          }
        };
        await Promise.all(Array.from({ length: Math.min(concurrency, ready.length) }, runner));
        await flush();
        if (notHanded.size > 0) await releaseLeases(db, id, clock.now(), [...notHanded]);
        notHanded.clear();
      } finally {
        clearInterval(renew);
        for (const r of rows) kindOf.delete(r.id);
      }
    }
    for (const kind of kinds.values()) await kind.afterSettle?.(deps, clock.now());
    return rows.length;
  };

  const tick = (): Promise<number> => {
    const run = (current ?? Promise.resolve(0)).catch(() => 0).then(runTick);
    current = run;
    return run;
  };

  // Idle waiting: a notification, a stop, or the timer ends it; a notification during a tick is remembered.
  const idler = idleWait(opts.loop !== false ? database.listener : null, QUEUE_CHANNEL);

  const loop = async () => {
    while (!stopping) {
      idler.reset();
      let claimed: number;
      try {
        claimed = await tick();
      } catch (err) {
        log.error({ err, worker: id }, 'mail queue: tick failed; trying again shortly');
        await idler.wait(pollMs);
        continue;
      }
      if (claimed > 0) continue;
      const hears = database.listener?.isListening() ?? false;
      let wait = hears ? idleMaxMs : pollMs;
      try {
        const due = await nextDueAt(db);
        let extra: Date | null = null;
        for (const kind of kinds.values()) extra = earliest(extra, (await kind.nextWakeAt?.(deps, clock.now())) ?? null);
        for (const at of [due, extra]) if (at) wait = Math.min(wait, at.getTime() - clock.now().getTime());
      } catch (err) {
        log.warn({ err, worker: id }, 'mail queue: next due time not read');
      }
      // A floor: rows due but held by another worker's claim must not spin this one.
      await idler.wait(Math.max(50, wait));
    }
  };

  const window = inFlightWindow({ concurrency, flushSize });
  let looping: Promise<void> | null = null;
  if (opts.loop !== false) {
    log.info({ worker: id, inFlightWindow: window, batchSize, concurrency }, 'mail queue worker started');
    looping = loop();
  }

  return {
    id,
    inFlightWindow: window,
    tick,
    async stop() {
      if (stopping) return;
      stopping = true;
      stopWaits.abort();
      idler.stop();
      const running = (looping ?? current ?? Promise.resolve()).then(
        () => undefined,
        () => undefined,
      );
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([running, new Promise<void>((r) => (timer = setTimeout(r, stopTimeoutMs)))]);
      clearTimeout(timer);
      // Past the bound, messages still with the transport keep their lease and come back when it ends.
      await flush();
      if (notHanded.size > 0) {
        await releaseLeases(db, id, clock.now(), [...notHanded]).catch((err) =>
          log.warn({ err, worker: id }, 'mail queue: leases not released'),
        );
        notHanded.clear();
      }
      if (looping) log.info({ worker: id }, 'mail queue worker stopped');
    },
  };
}
