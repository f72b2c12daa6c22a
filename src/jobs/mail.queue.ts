import type { QueueTable } from './queue/table.js';

/**
 * The mail queue, as the leased queue's SQL sees it: `mail_messages`, whose rows wait `queued`,
 * are claimed `sending` by a runner (`lease_owner`) until the end of their lease
 * (`next_attempt_at`), and are settled by the marks (sent, retried, bounced, deferred, skipped).
 */
export const MAIL_QUEUE: QueueTable<'mail_messages'> = {
  table: 'mail_messages',
  waiting: 'queued',
  claimed: 'sending',
  owner: 'lease_owner',
  due: 'next_attempt_at',
};
