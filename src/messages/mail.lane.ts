import type { AppDeps } from '../deps.js';
import type { QueuedMessage } from '../db/types.js';
import { classifyBounce } from '../delivery/bounce-classes.js';
import { applyDomainKeys, DOMAIN_HOLD_MS, DOMAIN_HOLD_TEXT } from '../delivery/domain-keys.js';
import { SMTP_POOL_CONNECTIONS } from '../delivery/transports.js';
import { relayDispatcher, RelaysPaused, RelayWaitAborted } from '../delivery/relays.js';
import { TransportError, type MailMessage, type Rendered, type Transport } from '../delivery/transport.js';
import { queueMetrics } from './messages.metrics.js';
import { markBounced, markDeferred, markRetry, markSent, markSkipped, type Bounced } from './messages.writes.js';
import type { MailKinds } from './messages.kinds.js';
import { SKIP_TEXTS, skipsAmong, type ClaimedAddress } from '../suppression/suppression.reads.js';
import { batcher } from '../jobs/batcher.js';
import { MAIL_QUEUE, QUEUE_CHANNEL, nextDueAt } from './mail.queue.js';
import { claim } from '../jobs/queue/claim.js';
import { release } from '../jobs/queue/release.js';
import { renew } from '../jobs/queue/renew.js';
import type { Lane, WorkContext } from '../jobs/runner.js';

/** How the mail lane claims and sends; every field has a default. */
export interface MailLaneOptions {
  /** Messages claimed per batch (default 100). */
  batchSize?: number;
  /** Messages handed to the transport at once (default: the connections of its relays' pools, else 5). */
  concurrency?: number;
  /** Sent messages marked per database write (default 10). */
  flushSize?: number;
}

/** The mail delivery lane. */
export interface MailLane extends Lane<QueuedMessage> {
  /**
   * The most messages that can be handed to the SMTP server and not yet marked sent at any
   * moment: the lane hands a new message over only while fewer than `2 × flushSize` accepted
   * ones wait for their mark, and at most `concurrency` are with the transport, so the bound is
   * `concurrency + 2 × flushSize` (one less, exactly). A crash re-sends at most this many.
   */
  readonly inFlightWindow: number;
}

/** Sent messages marked per database write, by default. */
const FLUSH_SIZE = 10;

/** The in-flight window of a mail lane with these options (see `MailLane.inFlightWindow`). */
export function inFlightWindow(opts: Pick<MailLaneOptions, 'concurrency' | 'flushSize'> = {}): number {
  return (opts.concurrency ?? SMTP_POOL_CONNECTIONS) + 2 * (opts.flushSize ?? FLUSH_SIZE);
}

/** Messages a transport takes at once: the connections of its relays' pools, or one pool's. */
function connectionsOf(transport: Transport): number {
  return transport.relays?.reduce((n, r) => n + r.connections, 0) || SMTP_POOL_CONNECTIONS;
}

/** The outcome of one message, waiting for its mark to be written. */
type Mark =
  | { type: 'sent'; id: number; messageId: string; relay: string | null; kind: string }
  | { type: 'retry'; id: number; error: string }
  | { type: 'bounce'; id: number; error: string }
  | { type: 'defer'; id: number; error: string; until: Date }
  | { type: 'skip'; id: number; state: 'suppressed' | 'cancelled'; reason: string };

/** The marks of one type among `marks`. */
const ofType = <K extends Mark['type']>(marks: readonly Mark[], type: K) =>
  marks.filter((m): m is Extract<Mark, { type: K }> => m.type === type);

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err)) || 'unknown error';

/**
 * The mail delivery lane of the runner whose lease owner is `owner`: it claims a batch of due
 * messages, leaves out addresses unsubscribed, suppressed or erased since they were queued (the
 * suppression check of src/suppression/, once per batch), renders each through its kind, sends
 * through `deps.transport` (its relays) with bounded concurrency, and
 * marks each message only after the transport resolved (sent), or failed (retried with backoff,
 * or bounced). Marks are written in small batches; the in-flight window is what a crash can send
 * twice. Time comes only from `deps.clock`.
 */
export function mailLane(deps: AppDeps, kinds: MailKinds, owner: string, opts: MailLaneOptions = {}): MailLane {
  const batchSize = opts.batchSize ?? 100;
  const concurrency = opts.concurrency ?? connectionsOf(deps.transport);
  const flushSize = opts.flushSize ?? FLUSH_SIZE;
  const { clock, log } = deps;
  const db = deps.database.db;
  const metrics = queueMetrics(deps, kinds);
  const relays = relayDispatcher(deps, owner);

  /** Messages the transport accepted whose `sent` mark is not written yet. */
  let unmarked = 0;

  /** One log line per bounce: the address, the server's answer, and hard (the address is suppressed) or soft. */
  const logBounce = (m: Bounced, type: 'hard' | 'soft') =>
    log.info({ worker: owner, messageId: m.id, kind: m.kind, email: m.email, type, reason: m.last_error }, 'mail bounced');

  /**
   * The marks, written by the batcher: one write at a time, in order, when `flushSize` sent
   * messages (or `flushSize` failures) wait, and on the runner's flush. Each type is one
   * statement or transaction; a failed write keeps the marks not yet written for the next.
   */
  const marks = batcher<Mark>(
    async (batch, written) => {
      try {
        const now = clock.now();
        const skips = ofType(batch, 'skip');
        await markSkipped(db, owner, now, skips);
        written(skips);
        const sent = ofType(batch, 'sent');
        await markSent(
          db,
          kinds,
          owner,
          now,
          sent.map(({ id, messageId, relay }) => ({ id, messageId, relay })),
        );
        unmarked -= sent.length;
        for (const s of sent) metrics.sent.inc({ kind: s.kind });
        written(sent);
        const retries = ofType(batch, 'retry');
        const outcome = await markRetry(db, kinds, owner, now, retries);
        for (const m of outcome.values()) {
          if (m.state === 'bounced') logBounce(m, 'soft');
          (m.state === 'bounced' ? metrics.bounced : metrics.retried).inc({ kind: m.kind });
        }
        written(retries);
        const bounces = ofType(batch, 'bounce');
        for (const m of await markBounced(db, kinds, owner, now, bounces)) {
          logBounce(m, classifyBounce(null, m.last_error));
          metrics.bounced.inc({ kind: m.kind });
        }
        written(bounces);
        await markDeferred(db, owner, now, ofType(batch, 'defer'));
      } catch (err) {
        log.error({ err, worker: owner }, 'mail queue: marks not written; kept for the next write');
        throw err;
      }
    },
    {
      start: 'flush',
      onFailure: 'keep',
      full: (waiting) => {
        let sent = 0;
        let failed = 0;
        for (const m of waiting) {
          if (m.type === 'sent') sent++;
          else if (m.type !== 'skip') failed++;
        }
        return sent >= flushSize || failed >= flushSize;
      },
    },
  );
  const flush = () => marks.flush();
  /** Buffers a mark; the batcher writes it with the others. */
  const mark = (m: Mark) => void marks.add(m);

  /**
   * Hands one rendered message to the transport and buffers its outcome. Accepted messages not yet
   * marked are what a crash would send again, so none is handed over while `2 × flushSize` of them
   * wait (one batch being written, one filling): the exposure stays within the in-flight window.
   * Marks are written in the background as each batch of `flushSize` fills, so sending goes on
   * during the write.
   */
  const sendOne = async (row: QueuedMessage, message: MailMessage, ctx: WorkContext) => {
    while (unmarked >= 2 * flushSize) {
      const before = unmarked;
      await flush();
      // The marks cannot be written (the database is away): stop sending; the tick fails and the
      // unsent messages come back when their lease ends.
      if (unmarked >= before) throw new Error('mail queue: sent marks cannot be written');
    }
    try {
      const r = await relays.send(message, { signal: ctx.signal, onHand: () => ctx.handedOver(row.id) });
      unmarked++;
      mark({ type: 'sent', id: row.id, messageId: r.messageId, relay: r.relay, kind: row.kind });
    } catch (err) {
      const error = errorText(err);
      if (err instanceof RelayWaitAborted) {
        // Stopping: the message went to no server; it is released with the others not handed over.
        ctx.giveBack(row.id);
        return;
      }
      ctx.handedOver(row.id);
      if (err instanceof RelaysPaused) {
        // Every relay throttles or is down: the relays, not the message, failed, so no attempt is
        // counted; it waits in the queue (not in this lane) until the first pause ends.
        mark({ type: 'defer', id: row.id, error, until: new Date(clock.now().getTime() + err.waitMs) });
      } else if (err instanceof TransportError && err.permanent) mark({ type: 'bounce', id: row.id, error });
      else mark({ type: 'retry', id: row.id, error });
    }
  };

  /**
   * The claimed rows as the suppression check sees them: each with the unsubscribe group its kind
   * sends it under, or no unsubscribe list at all for a kind without `unsubscribeGroups` (the
   * service's own mail) or of an unknown kind.
   */
  const claimedAddresses = async (rows: QueuedMessage[]): Promise<ClaimedAddress[]> => {
    const lists = new Map<number, ClaimedAddress['lists']>();
    const byKind = new Map<string, QueuedMessage[]>();
    for (const r of rows) byKind.set(r.kind, [...(byKind.get(r.kind) ?? []), r]);
    for (const [kind, group] of byKind) {
      const groupsOf = kinds.get(kind)?.unsubscribeGroups;
      if (!groupsOf) continue;
      const groups = await groupsOf(db, group);
      group.forEach((r, i) => lists.set(r.id, { group: groups[i] ?? null }));
    }
    return rows.map((r) => ({ user_id: r.user_id, email_key: r.email_key, lists: lists.get(r.id) ?? null }));
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
        for (const r of group) mark({ type: 'skip', id: r.id, state: 'cancelled', reason: `unknown kind of mail: ${kind}` });
        continue;
      }
      let out: Rendered[];
      try {
        out = await render(deps, group);
      } catch (err) {
        log.error({ err, kind, worker: owner }, 'mail queue: rendering failed; the messages wait their backoff');
        for (const r of group) mark({ type: 'retry', id: r.id, error: `rendering failed: ${errorText(err)}` });
        continue;
      }
      group.forEach((row, i) => {
        const o = out[i];
        if (!o) mark({ type: 'retry', id: row.id, error: 'rendering returned nothing' });
        else if ('skip' in o) mark({ type: 'skip', id: row.id, state: o.skip, reason: o.reason });
        else ready.push({ row, message: o.message });
      });
    }
    return ready;
  };

  const window = inFlightWindow({ concurrency, flushSize });
  return {
    name: 'mail',
    channel: QUEUE_CHANNEL,
    inFlightWindow: window,
    startLog: { inFlightWindow: window, batchSize, concurrency },
    leases: {
      claim: (worker, now, leaseMs) => claim<QueuedMessage>(db, MAIL_QUEUE, worker, now, batchSize, leaseMs),
      renew: (worker, now, leaseMs) => renew(db, MAIL_QUEUE, worker, now, leaseMs),
      release: (worker, now, ids) => release(db, MAIL_QUEUE, worker, now, ids),
    },
    async work(rows, ctx) {
      // An address unsubscribed, suppressed or erased since the message was queued is not mailed:
      // one check for the whole batch, before any rendering.
      const why = await skipsAmong(db, await claimedAddresses(rows), deps.config.appSecret);
      const live = rows.filter((r, i) => {
        const reason = why[i];
        if (reason === null) return true;
        mark({ type: 'skip', id: r.id, state: 'suppressed', reason: SKIP_TEXTS[reason] });
        ctx.handedOver(r.id);
        return false;
      });
      // Sending domains: each message signed with its domain's own key, or held while that domain fails.
      const { send: ready, hold } = await applyDomainKeys(
        db,
        deps.config.appSecret,
        await render(live),
        (x) => !!kinds.get(x.row.kind)?.source,
      );
      for (const { row } of hold)
        mark({ type: 'defer', id: row.id, error: DOMAIN_HOLD_TEXT, until: new Date(clock.now().getTime() + DOMAIN_HOLD_MS) });
      const handed = new Set(ready.map((x) => x.row.id));
      // Skipped and retried rows are settled by their marks, not released.
      for (const r of live) if (!handed.has(r.id)) ctx.handedOver(r.id);
      let next = 0;
      const sender = async () => {
        while (!ctx.stopping() && next < ready.length) {
          const { row, message } = ready[next++];
          await sendOne(row, message, ctx);
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, ready.length) }, sender));
    },
    flush,
    nextDueAt: () => nextDueAt(db),
  };
}
