/**
 * Every write of a message's row but its events' (`ledger.writes.ts`): enqueue, hold, release,
 * cancel, the marks of the mail lane (sent, retried, bounced, deferred, skipped), an erasure and a
 * lifted suppression. Each state change names its move of `messages.states.ts` first, whose
 * states become its guard. Modules call these; no other file writes `mail_messages`.
 */
import { sql, type Insertable, type RawBuilder } from 'kysely';
import type { Db } from '../db/index.js';
import type { MailMessageTable, MailState, QueuedMessage } from '../db/types.js';
import { isoMicros } from '../util/time.js';
import { eventColumns, record, sourceKeys, type CountedMessage, type EventMessage } from './ledger.js';
import type { MailKinds } from './messages.kinds.js';
import { classifyBounce } from '../delivery/bounce-classes.js';
import { BACKOFF_MS, MAX_ATTEMPTS, nextAttemptAt } from './mail.queue.js';
import { move, UNFINISHED } from './messages.states.js';

/** A message given up on, as the marks return it (for the counters and the log). */
export type Bounced = CountedMessage & Pick<QueuedMessage, 'user_id' | 'email' | 'email_key' | 'last_error'>;

/** The guard of every mark: only the worker holding the lease may settle a message, from a state `from` allows. */
function held(workerId: string, from: readonly MailState[]) {
  return sql<boolean>`state in (${sql.join(from)}) and lease_owner = ${workerId}`;
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
  const from = move(['sending'], 'sent');
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<EventMessage>`
      update mail_messages
      set state = 'sent', message_id = case id ${byId} end, relay = case id ${relayById} end, sent_at = ${at}, updated_at = ${at},
          lease_owner = null, last_error = null
      where id in (${sql.join(ids)}) and ${held(workerId, from)}
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
  const from = move(move(['sending'], 'bounced'), 'queued');
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
        .where(held(workerId, from))
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
  const from = move(['sending'], 'bounced');
  return db.transaction().execute(async (trx) => {
    const bounced: Bounced[] = [];
    for (const f of failed) {
      const marked = await trx
        .updateTable('mail_messages')
        .set({ state: 'bounced', attempts: sql`attempts + 1`, lease_owner: null, last_error: f.error.slice(0, 1000), updated_at: at })
        .where('id', '=', f.id)
        .where(held(workerId, from))
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
  const from = move(['sending'], 'queued');
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
    where id in (${sql.join(deferred.map((d) => d.id))}) and ${held(workerId, from)}`.execute(db);
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
        .where(held(workerId, move(['sending'], s.state)))
        .executeTakeFirst();
      n += Number(r.numUpdatedRows);
    }
    return n;
  });
}

/** A new message: its row as inserted, without the columns the table fills (state, counts). */
export type NewMessage = Pick<Insertable<MailMessageTable>, 'user_id' | 'kind' | 'email' | 'email_key' | 'payload' | 'contact_id'>;

/** Queues messages (state `queued`, due `now`), in the caller's transaction. */
export async function enqueue(db: Db, messages: readonly NewMessage[], now: Date): Promise<void> {
  if (messages.length === 0) return;
  const at = isoMicros(now);
  await db
    .insertInto('mail_messages')
    .values(messages.map((m) => ({ ...m, next_attempt_at: at, created_at: at, updated_at: at })))
    .execute();
}

/** A message column a producer may fill in an `INSERT … SELECT`. */
type Column = keyof MailMessageTable & string;

/**
 * Queues the rows of one `INSERT … SELECT`, in the caller's transaction; a row a unique index
 * already holds is left out. `select` yields, in order: `user_id`, `kind`, the `source` columns
 * (what queued it), `contact_id`, `email`, `email_key`, `payload`, the `extra` columns, and
 * `next_attempt_at`, `created_at`, `updated_at`; `with` holds its common table expressions.
 * Returns how many messages were queued.
 */
export async function enqueueSelected(
  db: Db,
  q: { with?: RawBuilder<unknown>; source: Column[]; extra?: Column[]; select: RawBuilder<unknown> },
): Promise<number> {
  const columns: Column[] = ['user_id', 'kind', ...q.source, 'contact_id', 'email', 'email_key', 'payload', ...(q.extra ?? [])];
  const r = await sql`
    ${q.with ?? sql``}
    insert into mail_messages (${sql.join([...columns, 'next_attempt_at', 'created_at', 'updated_at'].map((c) => sql.ref(c)))})
    ${q.select}
    on conflict do nothing`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

/** Which messages a move takes: those a column naming what queued them names (one or several ids). */
export type MessagesOf = { automation_id: number[] } | { automation_schedule_id: number } | { single_send_id: number[] };

/**
 * Moves the messages of `of` that are in a state of `from` to `to` (hold, release, cancel), with
 * `lastError` as the reason when given and, moving to `queued`, due `now`. Messages in other
 * states (a worker's, finished) are left alone. Returns how many moved.
 */
export async function moveMessages(
  db: Db,
  of: MessagesOf,
  change: { from: MailState[]; to: MailState; now: Date; lastError?: string },
): Promise<number> {
  const at = isoMicros(change.now);
  const [column, value] = Object.entries(of)[0] as [keyof MessagesOf & string, number | number[]];
  if (Array.isArray(value) && value.length === 0) return 0;
  const r = await db
    .updateTable('mail_messages')
    .set({
      state: change.to,
      updated_at: at,
      ...(change.lastError === undefined ? {} : { last_error: change.lastError }),
      ...(change.to === 'queued' ? { next_attempt_at: at } : {}),
    })
    .where(column as 'automation_id', Array.isArray(value) ? 'in' : '=', value)
    .where('state', 'in', move(change.from, change.to))
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/**
 * The account's messages to the address lose it: `email` and `email_key` become `erased:<row id>`
 * (unique per row, so the queue's one-row-per-address rules still hold), the payload (a system
 * mail's whole message) and the last error (a server's answer may quote the address) are cleared.
 * Their counts (opens, clicks, bounce, complaint) stay for the statistics. Messages not finished
 * are cancelled. Returns how many rows changed.
 */
export async function eraseAddress(db: Db, userId: number, key: string, now: Date): Promise<number> {
  const unfinished = sql.join(move(UNFINISHED, 'cancelled'));
  const r = await db
    .updateTable('mail_messages')
    .set({
      email: sql`'erased:' || cast(id as text)`,
      email_key: sql`'erased:' || cast(id as text)`,
      payload: null,
      last_error: sql`case when state in (${unfinished}) then 'the address was erased' else null end`,
      state: sql`case when state in (${unfinished}) then 'cancelled' else state end`,
      lease_owner: null,
      updated_at: isoMicros(now),
    })
    .where('user_id', '=', userId)
    .where('email_key', '=', key)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/**
 * The messages the address received so far no longer count for the sunset policy (`sunset_lifted`):
 * its suppression was lifted, so it is counted again only from the lift on.
 */
export async function sunsetLifted(db: Db, userId: number, emailKey: string): Promise<void> {
  await db
    .updateTable('mail_messages')
    .set({ sunset_lifted: 1 })
    .where('user_id', '=', userId)
    .where('email_key', '=', emailKey)
    .where('state', '=', 'sent')
    .where('sunset_lifted', '=', 0)
    .execute();
}
