import { sql } from 'kysely';
import type { Db } from '../db/index.js';
import { isoMicros } from '../util/time.js';
import { claim } from './queue/claim.js';
import { settle } from './queue/settle.js';
import type { QueueTable } from './queue/table.js';

/** The waits before the 2nd, 3rd, … 8th attempt; the 8th failure is final (`failed`). */
export const RETRY_SCHEDULE_MS = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 5 * 3_600_000, 10 * 3_600_000, 10 * 3_600_000] as const;
export const MAX_ATTEMPTS = RETRY_SCHEDULE_MS.length + 1;
/** An endpoint that has failed every attempt for this long is disabled. */
export const DISABLE_AFTER_MS = 5 * 24 * 3_600_000;
/** Finished events (every delivery delivered or failed) are deleted after this long. */
export const KEEP_EVENTS_MS = 30 * 24 * 3_600_000;

/** A claimed delivery with what posting it needs. */
export interface ClaimedDelivery {
  id: number;
  user_id: number;
  endpoint_id: number;
  /** The `webhook-id`. */
  event_id: string;
  body: string;
  url: string;
  /** The endpoint's signing secret, sealed (`WEBHOOK_SECRET`, util/seal.ts): the lane opens it to sign. */
  secret: string;
}

/**
 * The webhook deliveries, as the leased queue's SQL sees them: rows wait `pending`, are claimed
 * `sending` by a runner (`lease_owner`) until the end of their lease (`next_attempt_at`), and only
 * deliveries of an enabled endpoint are claimed.
 */
export const DELIVERY_QUEUE: QueueTable<'webhook_deliveries'> = {
  table: 'webhook_deliveries',
  waiting: 'pending',
  claimed: 'sending',
  owner: 'lease_owner',
  due: 'next_attempt_at',
  where: sql<boolean>`exists (select 1 from webhook_endpoints p where p.id = webhook_deliveries.endpoint_id and p.enabled = 1)`,
};

/**
 * Claims up to `limit` due deliveries of enabled endpoints for `workerId` (the leased queue's
 * claim), and returns them with their event's body and their endpoint's URL and secret.
 */
export async function claimDueDeliveries(db: Db, workerId: string, now: Date, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
  const rows = await claim(db, DELIVERY_QUEUE, workerId, now, limit, leaseMs, 'id');
  if (rows.length === 0) return [];
  const claimed = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .innerJoin('webhook_endpoints as p', 'p.id', 'd.endpoint_id')
    .where(
      'd.id',
      'in',
      rows.map((r) => r.id),
    )
    .select(['d.id', 'd.user_id', 'd.endpoint_id', 'e.event_id', 'e.body', 'p.url', 'p.secret'])
    .orderBy('d.id')
    .execute();
  return claimed.map((r) => ({ ...r, id: Number(r.id) }));
}

/** How one attempt of a claimed delivery ended. */
export interface AttemptOutcome {
  delivery: ClaimedDelivery;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** An endpoint the marks disabled (it had failed every attempt for 5 days). */
export interface DisabledEndpoint {
  id: number;
  user_id: number;
  url: string;
  failing_since: string;
}

/** What one write of outcomes did, for the metrics and the log. */
export interface Settled {
  delivered: number;
  retried: number;
  failed: number;
  disabled: DisabledEndpoint[];
}

/**
 * Writes the outcomes of attempts, in one transaction: successes `delivered`; failures `pending`
 * again, due after their wait in the retry schedule, or `failed` after the last attempt; one line
 * per attempt in the deliveries log; each endpoint's failing state (cleared by any success, set at
 * the first failure); and endpoints that failed every attempt for 5 days disabled, with their
 * unfinished deliveries failed and `onDisabled` run in the same transaction. A delivery this worker
 * no longer holds (its lease ran out and another worker took it) is left alone.
 */
export async function settleAttempts(
  db: Db,
  workerId: string,
  now: Date,
  outcomes: AttemptOutcome[],
  onDisabled: (trx: Db, endpoints: DisabledEndpoint[]) => Promise<void>,
): Promise<Settled> {
  const settled: Settled = { delivered: 0, retried: 0, failed: 0, disabled: [] };
  if (outcomes.length === 0) return settled;
  const at = isoMicros(now);
  const ok = outcomes.filter((o) => o.error === null);
  const failures = outcomes.filter((o) => o.error !== null);
  const waits = sql.join(
    RETRY_SCHEDULE_MS.map((ms, i) => sql`when ${i} then ${isoMicros(new Date(now.getTime() + ms))}`),
    sql` `,
  );
  return db.transaction().execute(async (trx) => {
    const marked = new Map<number, { attempts: number; next: string | null }>();
    if (ok.length > 0) {
      const ids = ok.map((o) => o.delivery.id);
      const rows = await settle(trx, DELIVERY_QUEUE, workerId, ids)
        .set({ state: 'delivered', attempts: sql`attempts + 1`, lease_owner: null, next_attempt_at: at, updated_at: at })
        .returning(['id', 'attempts'])
        .execute();
      for (const r of rows) marked.set(Number(r.id), { attempts: r.attempts, next: null });
      settled.delivered = rows.length;
    }
    if (failures.length > 0) {
      const ids = failures.map((o) => o.delivery.id);
      const rows = await settle(trx, DELIVERY_QUEUE, workerId, ids)
        .set({
          state: sql`case when attempts + 1 >= ${MAX_ATTEMPTS} then 'failed' else 'pending' end`,
          next_attempt_at: sql`case attempts ${waits} else ${at} end`,
          attempts: sql`attempts + 1`,
          lease_owner: null,
          updated_at: at,
        })
        .returning(['id', 'attempts', 'state', 'next_attempt_at'])
        .execute();
      for (const r of rows) marked.set(Number(r.id), { attempts: r.attempts, next: r.state === 'pending' ? r.next_attempt_at : null });
      settled.failed = rows.filter((r) => r.state === 'failed').length;
      settled.retried = rows.length - settled.failed;
    }
    const logged = outcomes.filter((o) => marked.has(o.delivery.id));
    if (logged.length === 0) return settled;
    await trx
      .insertInto('webhook_attempts')
      .values(
        logged.map((o) => ({
          delivery_id: o.delivery.id,
          endpoint_id: o.delivery.endpoint_id,
          attempt: marked.get(o.delivery.id)!.attempts,
          status_code: o.statusCode,
          error: o.error?.slice(0, 1000) ?? null,
          duration_ms: o.durationMs,
          created_at: at,
          next_attempt_at: marked.get(o.delivery.id)!.next,
        })),
      )
      .execute();
    const answered = new Set(logged.filter((o) => o.error === null).map((o) => o.delivery.endpoint_id));
    const failing = [...new Set(logged.filter((o) => o.error !== null).map((o) => o.delivery.endpoint_id))].filter(
      (id) => !answered.has(id),
    );
    if (answered.size > 0) {
      await trx
        .updateTable('webhook_endpoints')
        .set({ failing_since: null })
        .where('id', 'in', [...answered])
        .where('failing_since', 'is not', null)
        .execute();
    }
    if (failing.length > 0) {
      await trx
        .updateTable('webhook_endpoints')
        .set({ failing_since: at })
        .where('id', 'in', failing)
        .where('failing_since', 'is', null)
        .execute();
      const disabled = await trx
        .updateTable('webhook_endpoints')
        .set({ enabled: 0, updated_at: at })
        .where('id', 'in', failing)
        .where('enabled', '=', 1)
        .where('failing_since', '<=', isoMicros(new Date(now.getTime() - DISABLE_AFTER_MS)))
        .returning(['id', 'user_id', 'url', 'failing_since'])
        .execute();
      settled.disabled = disabled.map((e) => ({ ...e, failing_since: e.failing_since! }));
      if (disabled.length > 0) await onDisabled(trx, settled.disabled);
    }
    return settled;
  });
}

/** When the next delivery of an enabled endpoint becomes due (a lease end counts), or null when none is waiting. */
export async function nextDeliveryDueAt(db: Db): Promise<Date | null> {
  const row = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as p', 'p.id', 'd.endpoint_id')
    .select((eb) => eb.fn.min('d.next_attempt_at').as('at'))
    .where('d.state', 'in', ['pending', 'sending'])
    .where('p.enabled', '=', 1)
    .executeTakeFirst();
  return row?.at ? new Date(row.at) : null;
}

/**
 * Deletes up to `limit` events older than 30 days that nothing waits to deliver (each delivery
 * `delivered` or `failed`, or none left), with their deliveries and log. Returns how many.
 */
export async function pruneEvents(db: Db, now: Date, limit: number): Promise<number> {
  const cutoff = isoMicros(new Date(now.getTime() - KEEP_EVENTS_MS));
  const r = await db
    .deleteFrom('webhook_events')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('webhook_events as e')
        .select('e.id')
        .where('e.created_at', '<', cutoff)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('webhook_deliveries as d')
                .select('d.id')
                .whereRef('d.event_id', '=', 'e.id')
                .where('d.state', 'in', ['pending', 'sending']),
            ),
          ),
        )
        .orderBy('e.id')
        .limit(limit),
    )
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}
