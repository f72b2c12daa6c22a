/**
 * The service's own mail (kind `system`): sender verification links and event notifications. Each
 * is rendered whole when it is queued and goes as it is; it counts in no statistics.
 */
import type { Db } from '../../db/index.js';
import { trackingLinks } from '../../delivery/tracking.js';
import type { MailMessage } from '../../delivery/transport.js';
import { wakeWorkers } from '../../messages/mail.queue.js';
import { enqueue } from '../../messages/messages.writes.js';
import type { MailKind } from '../../messages/messages.kinds.js';

const KIND = 'system';

/**
 * Queues a fully rendered mail of the service itself (a sender verification link, an event
 * notification): a row in the caller's transaction, so the mail exists exactly when the change
 * that causes it is committed. `db` is the transaction (or the handle, for a change of one row).
 * `stored` replaces the kind and payload (the access mail keeps its payload sealed).
 */
export async function enqueueSystemMail(
  db: Db,
  userId: number,
  message: MailMessage,
  now: Date,
  stored: { kind: string; payload: string } = { kind: KIND, payload: JSON.stringify(message) },
): Promise<void> {
  const address = { email: message.to, email_key: message.to.trim().toLowerCase() };
  await enqueue(db, [{ user_id: userId, kind: stored.kind, ...address, payload: stored.payload }], now);
  await wakeWorkers(db);
}

/**
 * The service's own mail as a kind of the queue. The payload is the whole message and goes with
 * the row's stable Message-ID. A payload that is not a message cannot become one later, so it is
 * cancelled with the reason.
 */
export const systemMailKind: MailKind = {
  name: KIND,
  source: null,
  render: async (deps, rows) => {
    const links = trackingLinks(deps.config);
    return rows.map((row) => {
      try {
        const message = JSON.parse(row.payload ?? '') as MailMessage;
        if (!message || typeof message !== 'object' || typeof message.subject !== 'string') throw new Error('no subject');
        // VERP (BOUNCE_ADDRESS): the envelope sender names the message, so a bounce finds it.
        const envelopeFrom = links.verpAddress(row.id) ?? undefined;
        return { message: { ...message, to: row.email, messageId: links.messageId(row.id), envelopeFrom } };
      } catch (err) {
        return { skip: 'cancelled' as const, reason: `unreadable system mail payload: ${(err as Error).message}` };
      }
    });
  },
};
