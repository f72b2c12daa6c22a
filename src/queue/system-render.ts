import { trackingLinks } from '../delivery/tracking.js';
import type { MailMessage } from '../delivery/transport.js';
import type { Renderer } from './queue.types.js';

/**
 * The renderer of the service's own mails (kind `system`): the payload is the whole message,
 * rendered when it was queued, and goes as it is, with the row's stable Message-ID. A payload that is not a message cannot become
 * one later, so it is cancelled with the reason.
 */
export const renderSystemMail: Renderer = async (deps, rows) => {
  const links = trackingLinks(deps.config);
  return rows.map((row) => {
    try {
      const message = JSON.parse(row.payload ?? '') as MailMessage;
      if (!message || typeof message !== 'object' || typeof message.subject !== 'string') throw new Error('no subject');
      return { message: { ...message, to: row.email, messageId: links.messageId(row.id) } };
    } catch (err) {
      return { skip: 'cancelled' as const, reason: `unreadable system mail payload: ${(err as Error).message}` };
    }
  });
};
