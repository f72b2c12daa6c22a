/**
 * The mail of each enrolled address for one automation email: the email (schedule) is the
 * campaign source of the shared campaign renderer, under its automation's unsubscribe group.
 */
import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/index.js';
import { compiledOnce, renderCampaignBatch, type CampaignSource } from '../../delivery/campaign-mail.js';
import type { QueuedMessage } from '../../db/types.js';
import type { Rendered } from '../../delivery/transport.js';

/** Automation emails by id, with their automation's unsubscribe group and deletion. */
export function selectEmailsWithAutomation(db: Db, ids: number[]) {
  return db
    .selectFrom('automation_schedules as s')
    .innerJoin('automations as a', 'a.id', 's.automation_id')
    .selectAll('s')
    .select(['a.unsubscribe_group_id', 'a.deleted_at as automation_deleted_at'])
    .where('s.id', 'in', ids)
    .execute();
}

type EmailRow = Awaited<ReturnType<typeof selectEmailsWithAutomation>>[number];

/**
 * An automation email as the campaign renderer sees it. A test mail's subject starts with
 * `[Test] `; its design is cached by the version of the row it was made from.
 */
export function emailSource(db: Db, s: EmailRow, test = false): CampaignSource {
  return {
    userId: s.user_id,
    cancelled: s.automation_deleted_at !== null ? 'the automation was deleted' : null,
    design: () =>
      compiledOnce(db, test ? `test:automation_schedule:${s.id}:${s.updated_at}` : `automation_schedule:${s.id}`, () => ({
        design: { templateId: s.template_id, templateJson: s.template_json, templateHtml: s.template_html },
        subject: test ? `[Test] ${s.subject}` : s.subject,
        preheader: '',
        footer: true,
        openPixel: true,
        trackClicks: !test && s.track_clicks !== 0,
      })),
    clicks:
      test || s.track_clicks === 0
        ? null
        : {
            userId: s.user_id,
            sourceTable: 'automations',
            sourceId: s.automation_id,
            campaignTable: 'automation_schedules',
            campaignId: s.id,
          },
    fromSender: s.from_sender,
    replyTo: s.reply_to,
    senderName: s.sender_name,
    senderAddress: s.sender_address,
  };
}

/**
 * Renders a batch of claimed `automation` messages, in order (see `renderCampaignBatch`): one query
 * for their emails and automations, then the shared renderer's two. A message whose email or
 * automation was deleted is cancelled.
 */
export async function renderAutomationBatch(deps: AppDeps, rows: QueuedMessage[]): Promise<Rendered[]> {
  const ids = [...new Set(rows.map((r) => r.automation_schedule_id).filter((id): id is number => id !== null))];
  const emails = ids.length === 0 ? [] : await selectEmailsWithAutomation(deps.database.db, ids);
  const sources = new Map<number, CampaignSource>(emails.map((s) => [s.id, emailSource(deps.database.db, s)]));
  return renderCampaignBatch(deps, rows, (row) =>
    row.automation_schedule_id === null ? undefined : sources.get(row.automation_schedule_id),
  );
}

/**
 * The unsubscribe group each `automation` message is sent under: its automation's (null when the
 * automation has none, or is gone, or is another account's). One query for the batch.
 */
export async function automationGroups(db: Db, rows: QueuedMessage[]): Promise<Array<number | null>> {
  const ids = [...new Set(rows.map((r) => r.automation_id).filter((id): id is number => id !== null))];
  const found =
    ids.length > 0
      ? await db.selectFrom('automations').select(['id', 'user_id', 'unsubscribe_group_id']).where('id', 'in', ids).execute()
      : [];
  const byId = new Map(found.map((a) => [a.id, a]));
  return rows.map((r) => {
    const automation = r.automation_id === null ? undefined : byId.get(r.automation_id);
    return automation?.user_id === r.user_id ? automation.unsubscribe_group_id : null;
  });
}
