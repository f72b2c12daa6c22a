/**
 * Test mails as a kind of mail: rendered exactly as the send's or automation email's real mail
 * (suppression included: an unsubscribed or bounced address gets no test either), with the
 * `[Test] ` subject; counted nowhere.
 */
import type { QueuedMessage } from '../../db/types.js';
import { renderCampaignBatch, type CampaignSource } from '../../delivery/campaign-mail.js';
import type { MailKind } from '../../queue/queue.types.js';
import { emailSource, selectEmailsWithAutomation } from '../automations/automations.message.js';
import { sendSource } from '../single-sends/message.js';
import type { TestPayload } from './test-sends.schema.js';

export const TEST_KIND = 'test';

function payloadOf(row: QueuedMessage): Partial<{ single_send_id: number; automation_schedule_id: number }> {
  try {
    return JSON.parse(row.payload ?? '{}') as TestPayload;
  } catch {
    return {};
  }
}

export const testSendKind: MailKind = {
  name: TEST_KIND,
  source: null,
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
      ...sends.map((s) => [`s${s.id}`, sendSource(s, true)] as const),
      ...emails.map((e) => [`a${e.id}`, emailSource(e, true)] as const),
    ]);
    const sourceOf = new Map(
      rows.map((row, i) => {
        const p = payloads[i];
        return [row.id, sources.get(p.single_send_id !== undefined ? `s${p.single_send_id}` : `a${p.automation_schedule_id}`)];
      }),
    );
    return renderCampaignBatch(deps, rows, (row) => sourceOf.get(row.id));
  },
};
