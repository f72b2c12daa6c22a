/**
 * Seeds what the public pages act on, straight through Kysely: a verified sender, an unsubscribe
 * group, a single send under that group and one sent `mail_messages` row per address; an automation
 * with one email. Used by the public pages' tests and by `npm run bench:opens`.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Db } from '../../src/db/index.js';
import { isoMicros, sqlDateTime } from '../../src/util/time.js';

export interface SeededSend {
  sendId: number;
  senderId: number;
  /** The group the send goes out under. */
  groupId: number;
  /** One message per address, in the order given. */
  messageIds: number[];
}

/** A live unsubscribe group of the account. */
export async function seedGroup(db: Db, userId: number, name: string, isDisplay: 0 | 1, description = ''): Promise<number> {
  const now = isoMicros(new Date());
  const row = await db
    .insertInto('unsubscribe_groups')
    .values({
      user_id: userId,
      rand_id: String(100_000_000_000 + Math.floor(Math.random() * 899_999_999_999)),
      group_name: name,
      description,
      is_display: isDisplay,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** A completed single send to `emails` under a new group (or `groupId`), with its messages. */
export async function seedSingleSend(db: Db, userId: number, emails: string[], opts: { groupId?: number } = {}): Promise<SeededSend> {
  const now = isoMicros(new Date());
  const sender = await db
    .insertInto('senders')
    .values({
      user_id: userId,
      from_name: 'Ada',
      from_email: 'ada@example.com',
      reply_to_email: 'ada@example.com',
      country_id: 101,
      state_id: null,
      city_id: null,
      zip_code: null,
      company_address: '1 Main St',
      company_address2: null,
      nickname: 'ada',
      is_verified: 1,
      utr: randomUUID(),
      send_at: null,
      deleted_at: null,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const groupId = opts.groupId ?? (await seedGroup(db, userId, `Send group ${randomBytes(3).toString('hex')}`, 0));
  const send = await db
    .insertInto('single_sends')
    .values({
      user_id: userId,
      utr: randomUUID(),
      template_id: 1,
      template_json: null,
      template_html: '<p>Hi</p>',
      recipient_id: '[]',
      sender_id: sender.id,
      unsubscribe_group_id: groupId,
      single_send_name: 'Spring news',
      from_sender: 'ada@example.com',
      reply_to: 'ada@example.com',
      sender_name: 'Ada',
      sender_address: '1 Main St',
      subject: 'Hello',
      preheader: '',
      schedule_type: 0,
      schedule_date: '0000-00-00',
      schedule_time: '00:00:00',
      timezone: null,
      due_at: now,
      status: 3,
      triggered: emails.length,
      delivered: emails.length,
      sent_at: sqlDateTime(new Date()),
      deleted_at: null,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const messageIds: number[] = [];
  for (let i = 0; i < emails.length; i += 1000) {
    const rows = emails.slice(i, i + 1000).map((email) => ({
      user_id: userId,
      kind: 'single_send' as const,
      single_send_id: send.id,
      automation_id: null,
      contact_id: null,
      email,
      email_key: email.trim().toLowerCase(),
      payload: null,
      state: 'sent' as const,
      next_attempt_at: now,
      lease_owner: null,
      last_error: null,
      message_id: `<${randomUUID()}@example.com>`,
      sent_at: now,
      first_opened_at: null,
      created_at: now,
      updated_at: now,
    }));
    const ids = await db.insertInto('mail_messages').values(rows).returning('id').execute();
    messageIds.push(...ids.map((r) => r.id));
  }
  return { sendId: send.id, senderId: sender.id, groupId, messageIds };
}

/** What an automation email is made of, for `seedAutomationEmail`. */
export interface SeedEmailInput {
  subject?: string;
  templateId?: number;
  templateJson?: string | null;
  templateHtml?: string | null;
  senderName?: string | null;
  senderAddress?: string | null;
  /** The automation was deleted (its emails' pages must be gone). */
  deleted?: boolean;
}

/** A draft automation of the account with one email (schedule); returns the email's utr. */
export async function seedAutomationEmail(db: Db, userId: number, input: SeedEmailInput = {}): Promise<string> {
  const now = isoMicros(new Date());
  const automation = await db
    .insertInto('automations')
    .values({
      user_id: userId,
      utr: randomUUID(),
      automation_name: 'Welcome series',
      automation_type: 1,
      automation_for: 1,
      automation_for_table: 'contacts',
      unsubscribe_group_id: null,
      live_at: null,
      deleted_at: input.deleted ? now : null,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const utr = randomUUID();
  await db
    .insertInto('automation_schedules')
    .values({
      user_id: userId,
      automation_id: automation.id,
      utr,
      sender_id: 1,
      from_sender: 'ada@example.com',
      reply_to: 'ada@example.com',
      sender_name: input.senderName === undefined ? 'Ada' : input.senderName,
      sender_address: input.senderAddress === undefined ? '1 Main St, Springfield' : input.senderAddress,
      subject: input.subject ?? 'Welcome aboard',
      waiting_period: 0,
      waiting_type: 'instantly',
      template_id: input.templateId ?? 1,
      preview_img: '',
      template_json: input.templateJson ?? null,
      template_html: input.templateHtml ?? null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return utr;
}
