import { sql } from 'kysely';
import type { Db } from '../db/index.js';
import { engineOf, toCount } from '../db/dialect.js';
import type { MailState, QueuedMessage } from '../db/types.js';
import { isoMicros } from '../util/time.js';
import { eventColumns, record, sourceKeys, type CountedMessage, type EventMessage } from '../ledger/ledger.js';
import type { MailKinds } from './queue.types.js';
import { classifyBounce } from '../delivery/bounce-classes.js';

/** The PostgreSQL channel that wakes idle workers when mail becomes due. */
export const QUEUE_CHANNEL = 'campaign_mail';

/**
 * Tells idle workers that mail is due. On PostgreSQL a NOTIFY sent inside a transaction is
 * delivered at its commit (and not at all on rollback), so call it in the transaction that adds
 * the mail. SQLite has one worker, in the server process, which polls.
 */
export async function wakeWorkers(db: Db): Promise<void> {
  if (engineOf(db) === 'postgres') await sql`select pg_notify(${QUEUE_CHANNEL}, '')`.execute(db);
}

/** A message given up on, as the marks return it (for the counters and the log). */
export type Bounced = CountedMessage & Pick<QueuedMessage, 'user_id' | 'email' | 'email_key' | 'last_error'>;

/**
 * Waits before the next attempt after the 1st, 2nd, 3rd and 4th temporary failure; the 5th
 * failure is final (a bounce).
 */
export const BACKOFF_MS = [60_000, 5 * 60_000, 30 * 60_000, 2 * 60 * 60_000] as const;
/** Temporary failures after which a message counts as bounced. */
export const MAX_ATTEMPTS = BACKOFF_MS.length + 1;

/** When the next attempt after the `failures`-th temporary failure may run. */
export function nextAttemptAt(now: Date, failures: number): Date {
  return new Date(now.getTime() + BACKOFF_MS[Math.min(failures, BACKOFF_MS.length) - 1]);
}

/** The guard of every mark: only the worker holding the lease may settle a message. */
function held(workerId: string) {
  return sql<boolean>`state = 'sending' and lease_owner = ${workerId}`;
}

/**
 * Marks messages sent after the SMTP server accepted them, with our Message-ID and the time, and
 * hands them to the ledger as delivered (their counters, hours and `message.delivered` events):
 * one statement for the batch, in one transaction with the ledger's.
 * Returns how many were still held (a message whose lease ran out and went to another worker is
 * not marked, nor counted, by this one).
 */
export async function markSent(
  db: Db,
  kinds: MailKinds,
  workerId: string,
  now: Date,
  sent: Array<{ id: number; messageId: string; relay?: string | null }>,
): Promise<number> {
  if (sent.length === 0) return 0;
  const at = isoMicros(now);
  const ids = sent.map((s) => s.id);
  const byId = sql.join(
    sent.map((s) => sql`when ${s.id} then ${s.messageId}`),
    sql` `,
  );
  const relayById = sql.join(
    sent.map((s) => sql`when ${s.id} then ${s.relay ?? null}`),
    sql` `,
  );
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<EventMessage>`
      update mail_messages
      set state = 'sent', message_id = case id ${byId} end, relay = case id ${relayById} end, sent_at = ${at}, updated_at = ${at},
          lease_owner = null, last_error = null
      where id in (${sql.join(ids)}) and ${held(workerId)}
      returning ${sql.join(eventColumns(kinds).map((c) => sql.ref(c)))}`.execute(trx);
    await record(
      trx,
      { kinds, now },
      rows.map((message) => ({ type: 'delivered', message })),
    );
    return rows.length;
  });
}

/**
 * A temporary failure (4xx, dropped connection, timeout): the message waits its backoff and is
 * tried again; the 5th failure makes it bounced: a soft bounce (counted in `bounces` and
 * `soft_bounces`; the address is suppressed only at the soft threshold: the ledger's bounce). Returns each held message as marked, with its new state.
 */
export async function markRetry(
  db: Db,
  kinds: MailKinds,
  workerId: string,
  now: Date,
  failed: Array<{ id: number; error: string }>,
): Promise<Map<number, Bounced & { state: MailState }>> {
  const at = isoMicros(now);
  const outcome = new Map<number, Bounced & { state: MailState }>();
  if (failed.length === 0) return outcome;
  // The wait after the n-th failure, chosen in SQL from the row's own count.
  const waits = sql.join(
    BACKOFF_MS.map((_, i) => sql`when ${i} then ${isoMicros(nextAttemptAt(now, i + 1))}`),
    sql` `,
  );
  await db.transaction().execute(async (trx) => {
    const bounced: Bounced[] = [];
    for (const f of failed) {
      const marked = await trx
        .updateTable('mail_messages')
        .set({
          state: sql`case when attempts + 1 >= ${MAX_ATTEMPTS} then 'bounced' else 'queued' end`,
          next_attempt_at: sql`case attempts ${waits} else ${at} end`,
          attempts: sql`attempts + 1`,
          lease_owner: null,
          last_error: f.error.slice(0, 1000),
          updated_at: at,
        })
        .where('id', '=', f.id)
        .where(held(workerId))
        .returning(['id', 'kind', 'user_id', 'email', 'email_key', 'state', 'last_error', ...sourceKeys(kinds)])
        .executeTakeFirst();
      if (!marked) continue;
      outcome.set(f.id, marked);
      if (marked.state === 'bounced') bounced.push(marked);
    }
    // The last of the temporary failures is a soft bounce: it counts toward the soft threshold.
    await record(
      trx,
      { kinds, now },
      bounced.map((m) => ({ type: 'bounced', id: m.id, after: 'attempt', bounce: 'soft', detail: m.last_error })),
    );
  });
  return outcome;
}

/**
 * A permanent failure (5xx): the message is bounced at once and counted in `bounces`. The
 * server's answer is classified by the one rule of hard and soft (`classifyBounce`): hard
 * suppresses the address for the account at once, soft counts toward the soft threshold
 * (the ledger's bounce). Returns the messages that were still held, as marked.
 */
export async function markBounced(
  db: Db,
  kinds: MailKinds,
  workerId: string,
  now: Date,
  failed: Array<{ id: number; error: string }>,
): Promise<Bounced[]> {
  if (failed.length === 0) return [];
  const at = isoMicros(now);
  return db.transaction().execute(async (trx) => {
    const bounced: Bounced[] = [];
    for (const f of failed) {
      const marked = await trx
        .updateTable('mail_messages')
        .set({ state: 'bounced', attempts: sql`attempts + 1`, lease_owner: null, last_error: f.error.slice(0, 1000), updated_at: at })
        .where('id', '=', f.id)
        .where(held(workerId))
        .returning(['id', 'kind', 'user_id', 'email', 'email_key', 'last_error', ...sourceKeys(kinds)])
        .executeTakeFirst();
      if (marked) bounced.push(marked);
    }
    await record(
      trx,
      { kinds, now },
      bounced.map((m) => ({
        type: 'bounced',
        id: m.id,
        after: 'attempt',
        bounce: classifyBounce(null, m.last_error),
        detail: m.last_error,
      })),
    );
    return bounced;
  });
}

/**
 * Messages no relay would take now (every relay throttles or is down): back to `queued`, due when
 * the first relay's pause ends, with the answer in `last_error`. Their `attempts` are untouched:
 * the relays failed, not the message, so a throttling relay never makes a message bounce. Counts
 * nothing; returns how many were still held.
 */
export async function markDeferred(
  db: Db,
  workerId: string,
  now: Date,
  deferred: Array<{ id: number; error: string; until: Date }>,
): Promise<number> {
  if (deferred.length === 0) return 0;
  const at = isoMicros(now);
  const whenById = sql.join(
    deferred.map((d) => sql`when ${d.id} then ${isoMicros(d.until)}`),
    sql` `,
  );
  const errorById = sql.join(
    deferred.map((d) => sql`when ${d.id} then ${d.error.slice(0, 1000)}`),
    sql` `,
  );
  const r = await sql`
    update mail_messages
    set state = 'queued', lease_owner = null, next_attempt_at = case id ${whenById} end,
        last_error = case id ${errorById} end, updated_at = ${at}
    where id in (${sql.join(deferred.map((d) => d.id))}) and ${held(workerId)}`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

/**
 * Settles messages that must not go (the renderer said so: the address was unsubscribed or
 * bounced since the recipients were resolved, the send was deleted): `suppressed` or `cancelled`,
 * with the reason in `last_error`. Counts nothing.
 */
export async function markSkipped(
  db: Db,
  workerId: string,
  now: Date,
  skipped: Array<{ id: number; state: 'suppressed' | 'cancelled'; reason: string }>,
): Promise<number> {
  if (skipped.length === 0) return 0;
  const at = isoMicros(now);
  return db.transaction().execute(async (trx) => {
    let n = 0;
    for (const s of skipped) {
      const r = await trx
        .updateTable('mail_messages')
        .set({ state: s.state, lease_owner: null, last_error: s.reason.slice(0, 1000), updated_at: at })
        .where('id', '=', s.id)
        .where(held(workerId))
        .executeTakeFirst();
      n += Number(r.numUpdatedRows);
    }
    return n;
  });
}

/** When the next unfinished message becomes due (a lease end counts), or null when none is left. */
export async function nextDueAt(db: Db): Promise<Date | null> {
  const row = await db
    .selectFrom('mail_messages')
    .select((eb) => eb.fn.min('next_attempt_at').as('at'))
    .where('state', 'in', ['queued', 'sending'])
    .executeTakeFirst();
  return row?.at ? new Date(row.at) : null;
}

/** How many messages are in each unfinished state (`queued`, `sending`): the queue depth. */
export async function countUnfinished(db: Db): Promise<Record<'queued' | 'sending', number>> {
  const rows = await db
    .selectFrom('mail_messages')
    .select(['state', (eb) => eb.fn.countAll().as('n')])
    .where('state', 'in', ['queued', 'sending'])
    .groupBy('state')
    .execute();
  const depth = { queued: 0, sending: 0 };
  for (const r of rows) depth[r.state as 'queued' | 'sending'] = toCount(r.n);
  return depth;
}
