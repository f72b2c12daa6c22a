/**
 * The mail queue around the message table: its lease as the leased queue's SQL sees it (the
 * descriptor the generic `src/jobs/queue/` operations take), the channel that wakes workers, the
 * backoff of temporary failures, and the reads of its depth. The writes are `messages.writes.ts`.
 */
import { sql } from 'kysely';
import type { Db } from '../db/index.js';
import { engineOf, toCount } from '../db/dialect.js';
import type { QueueTable } from '../jobs/queue/table.js';
import { move } from './messages.states.js';

/**
 * The mail queue, as the leased queue's SQL sees it: `mail_messages`, whose rows wait `queued`,
 * are claimed `sending` by a runner (`lease_owner`) until the end of their lease
 * (`next_attempt_at`), and are settled by the marks (sent, retried, bounced, deferred, skipped).
 * Its claim (queued → sending, or a lease that ran out: sending → sending) and its release
 * (sending → queued) are moves of the declared state machine, checked here once.
 */
move(['queued', 'sending'], 'sending');
move(['sending'], 'queued');
export const MAIL_QUEUE: QueueTable<'mail_messages'> = {
  table: 'mail_messages',
  waiting: 'queued',
  claimed: 'sending',
  owner: 'lease_owner',
  due: 'next_attempt_at',
};

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
