import type { Db } from '../../db/index.js';

/** The account's newest sent messages that the outbox may show: every kind but people's access mail. */
export function newestSent(db: Db, userId: number, limit: number) {
  return db
    .selectFrom('mail_messages')
    .select(['id', 'kind', 'email', 'message_id', 'sent_at'])
    .where('user_id', '=', userId)
    .where('state', '=', 'sent')
    .where('kind', '!=', 'access')
    .where('message_id', 'is not', null)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}
