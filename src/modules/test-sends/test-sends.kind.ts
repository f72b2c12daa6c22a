/**
 * Test mails as a kind of mail: rendered exactly as the send's or automation email's real mail,
 * with the `[Test] ` subject and the data of the contact the test was filled with; counted nowhere. Suppression is the real mail's too: the suppression
 * check before rendering reads the send's or automation's unsubscribe group (`unsubscribeGroups`),
 * so an unsubscribed or bounced address gets no test either.
 */
import type { Db } from '../../db/index.js';
import type { QueuedMessage } from '../../db/types.js';
import { renderCampaignBatch, type CampaignSource } from '../../delivery/campaign-mail.js';
import type { MailKind } from '../../messages/messages.kinds.js';
import { emailSource, selectEmailsWithAutomation } from '../automations/automations.message.js';
import { sendSource } from '../single-sends/message.js';
import type { TestPayload } from './test-sends.schema.js';

export const TEST_KIND = 'test';

function payloadOf(row: QueuedMessage): Partial<{ single_send_id: number; automation_schedule_id: number; fill_contact_id: number }> {
  try {
    return JSON.parse(row.payload ?? '{}') as TestPayload;
  } catch {
    return {};
  }
}

/**
 * The unsubscribe group each test mail goes under: its send's, or its automation email's
 * automation's (null when that is gone or another account's). At most two queries for the batch.
 */
async function testGroups(db: Db, rows: QueuedMessage[]): Promise<Array<number | null>> {
  const payloads = rows.map(payloadOf);
  const sendIds = [...new Set(payloads.flatMap((p) => (typeof p.single_send_id === 'number' ? [p.single_send_id] : [])))];
  const emailIds = [...new Set(payloads.flatMap((p) => (typeof p.automation_schedule_id === 'number' ? [p.automation_schedule_id] : [])))];
  const sends =
    sendIds.length > 0
      ? await db.selectFrom('single_sends').select(['id', 'user_id', 'unsubscribe_group_id']).where('id', 'in', sendIds).execute()
      : [];
  const emails = emailIds.length > 0 ? await selectEmailsWithAutomation(db, emailIds) : [];
  const groups = new Map<string, { user_id: number; unsubscribe_group_id: number | null }>([
    ...sends.map((s) => [`s${s.id}`, s] as const),
    ...emails.map((e) => [`a${e.id}`, e] as const),
  ]);
  return rows.map((row, i) => {
    const p = payloads[i];
    const found = groups.get(p.single_send_id !== undefined ? `s${p.single_send_id}` : `a${p.automation_schedule_id}`);
    return found?.user_id === row.user_id ? found.unsubscribe_group_id : null;
  });
}

export const testSendKind: MailKind = {
  name: TEST_KIND,
  source: null,
  unsubscribeGroups: testGroups,
  render: async (deps, rows) => {
    const { db } = deps.database;
    const payloads = rows.map(payloadOf);
    const sendIds = [...new Set(payloads.flatMap((p) => (typeof p.single_send_id === 'number' ? [p.single_send_id] : [])))];
    const emailIds = [
      ...new Set(payloads.flatMap((p) => (typeof p.automation_schedule_id === 'number' ? [p.automation_schedule_id] : []))),
    ];
    const sends = sendIds.length > 0 ? await db.selectFrom('single_sends').selectAll().where('id', 'in', sendIds).execute() : [];
    const emails = emailIds.length > 0 ? await selectEmailsWithAutomation(db, emailIds) : [];
    const sources = new Map<string, CampaignSource>([
      ...sends.map((s) => [`s${s.id}`, sendSource(db, s, true)] as const),
      ...emails.map((e) => [`a${e.id}`, emailSource(db, e, true)] as const),
    ]);
    const sourceOf = new Map(
      rows.map((row, i) => {
        const p = payloads[i];
        return [row.id, sources.get(p.single_send_id !== undefined ? `s${p.single_send_id}` : `a${p.automation_schedule_id}`)];
      }),
    );
    // The renderer reads the row's contact: a test filled with another contact's data renders as that contact.
    const filled = rows.map((row, i) => {
      const fill = payloads[i].fill_contact_id;
      return typeof fill === 'number' ? { ...row, contact_id: fill } : row;
    });
    return renderCampaignBatch(deps, filled, (row) => sourceOf.get(row.id));
  },
};
