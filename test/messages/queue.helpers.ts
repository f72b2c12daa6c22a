import { randomUUID } from 'node:crypto';
import type { Db } from '../../src/db/index.js';
import type { MailMessage } from '../../src/delivery/transport.js';
import { isoMicros } from '../../src/util/time.js';

/** A system mail to `to` (subject names it, so a received copy is easy to match). */
export function systemMail(to: string, subject = `Note for ${to}`): MailMessage {
  return { from: { name: 'Campaign API', address: 'no-reply@localhost' }, to, subject, text: `Hello ${to}`, html: `<p>Hello ${to}</p>` };
}

/** Queues `count` system mails for `user_<prefix>-<i>@example.com`, due at `now`, in bulk; returns the addresses. */
export async function queueSystemMails(db: Db, userId: number, count: number, now: Date, prefix = 'bulk'): Promise<string[]> {
  const at = isoMicros(now);
  const emails = Array.from({ length: count }, (_, i) => `${prefix}-${i}@example.com`);
  for (let i = 0; i < emails.length; i += 500) {
    await db
      .insertInto('mail_messages')
      .values(
        emails.slice(i, i + 500).map((email) => ({
          user_id: userId,
          kind: 'system' as const,
          email,
          email_key: email,
          payload: JSON.stringify(systemMail(email)),
          next_attempt_at: at,
          created_at: at,
          updated_at: at,
        })),
      )
      .execute();
  }
  return emails;
}

/** A bare single send row of the account (status 2, running), for the counters; returns its id. */
export async function insertSingleSend(db: Db, userId: number): Promise<number> {
  const at = isoMicros(new Date());
  const row = await db
    .insertInto('single_sends')
    .values({
      user_id: userId,
      utr: randomUUID(),
      template_id: 1,
      template_html: '<p>Hi</p>',
      recipient_id: '[]',
      sender_id: 1,
      unsubscribe_group_id: 1,
      single_send_name: 'Counters',
      from_sender: 'news@example.com',
      reply_to: 'news@example.com',
      subject: 'Hi',
      preheader: '',
      schedule_type: 0,
      schedule_date: '0000-00-00',
      schedule_time: '00:00:00',
      status: 2,
      created_at: at,
      updated_at: at,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Queues one message of kind `single_send` for the send (rendered by the test's own renderer). */
export async function queueSendMessage(db: Db, userId: number, sendId: number, email: string, now: Date): Promise<number> {
  const at = isoMicros(now);
  const row = await db
    .insertInto('mail_messages')
    .values({
      user_id: userId,
      kind: 'single_send',
      single_send_id: sendId,
      email,
      email_key: email.toLowerCase(),
      next_attempt_at: at,
      created_at: at,
      updated_at: at,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

/** The queue row of an address. */
export function rowOf(db: Db, email: string) {
  return db.selectFrom('mail_messages').selectAll().where('email', '=', email).executeTakeFirstOrThrow();
}
