import { sql } from 'kysely';
import type { Db } from '../db/index.js';
import { engineOf } from '../db/dialect.js';
import type { MailMessage } from '../delivery/transport.js';
import { isoMicros } from '../util/time.js';

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
 * Queues a fully rendered mail of the service itself (a sender verification link, an event
 * notification): a row in the caller's transaction, so the mail exists exactly when the change
 * that causes it is committed. `db` is the transaction (or the handle, for a change of one row).
 */
export async function enqueueSystemMail(db: Db, userId: number, message: MailMessage, now: Date): Promise<void> {
  const at = isoMicros(now);
  await db
    .insertInto('mail_messages')
    .values({
      user_id: userId,
      kind: 'system',
      email: message.to,
      email_key: message.to.trim().toLowerCase(),
      payload: JSON.stringify(message),
      next_attempt_at: at,
      created_at: at,
      updated_at: at,
    })
    .execute();
  await wakeWorkers(db);
}
