/**
 * The mail of each recipient of a single send: the send is the campaign source of the shared
 * campaign renderer (`delivery/campaign-mail.ts`), its design compiled once per send.
 */
import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/index.js';
import { compiledOnce, renderCampaignBatch, type CampaignSource } from '../../delivery/campaign-mail.js';
import type { CompiledDesign } from '../../delivery/render.js';
import type { QueuedMessage } from '../../db/types.js';
import type { Rendered } from '../../delivery/transport.js';
import type { SingleSendRow } from './single-sends.schema.js';

/**
 * The send's compiled design: subject, preheader, footer where the design lacks it, open pixel,
 * click slots unless `track_clicks` is 0 (a test mail's links are left alone: it counts nowhere).
 * A test mail's subject starts with `[Test] `; a draft can still change, so its design is cached
 * by the version of the row it was made from.
 */
export function compiledFor(send: SingleSendRow, test = false): Promise<CompiledDesign> {
  const key = test ? `test:single_send:${send.id}:${send.updated_at}` : `single_send:${send.id}`;
  return compiledOnce(key, () => ({
    design: { templateId: send.template_id, templateJson: send.template_json, templateHtml: send.template_html },
    subject: test ? `[Test] ${send.subject}` : send.subject,
    preheader: send.preheader,
    footer: true,
    openPixel: true,
    trackClicks: !test && send.track_clicks !== 0,
  }));
}

/** A send as the campaign renderer sees it (for a test mail: its `[Test] ` version). */
export function sendSource(send: SingleSendRow, test = false): CampaignSource {
  return {
    userId: send.user_id,
    cancelled: send.deleted_at !== null ? 'the single send was deleted' : null,
    design: () => compiledFor(send, test),
    clicks:
      test || send.track_clicks === 0
        ? null
        : { userId: send.user_id, sourceTable: 'single_sends', sourceId: send.id, campaignTable: 'single_sends', campaignId: send.id },
    fromSender: send.from_sender,
    replyTo: send.reply_to,
    senderName: send.sender_name,
    senderAddress: send.sender_address,
  };
}

/**
 * Renders a batch of claimed `single_send` messages, in order (see `renderCampaignBatch`): one
 * query for their sends, then the shared renderer's two.
 */
export async function renderSingleSendBatch(deps: AppDeps, rows: QueuedMessage[]): Promise<Rendered[]> {
  const ids = [...new Set(rows.map((r) => r.single_send_id).filter((id): id is number => id !== null))];
  const sends = ids.length > 0 ? await deps.database.db.selectFrom('single_sends').selectAll().where('id', 'in', ids).execute() : [];
  const sources = new Map(sends.map((s) => [s.id, sendSource(s)]));
  return renderCampaignBatch(deps, rows, (row) => (row.single_send_id === null ? undefined : sources.get(row.single_send_id)));
}

/**
 * The unsubscribe group each `single_send` message is sent under: its send's (null when the send
 * has none, or is gone, or is another account's). One query for the batch.
 */
export async function singleSendGroups(db: Db, rows: QueuedMessage[]): Promise<Array<number | null>> {
  const ids = [...new Set(rows.map((r) => r.single_send_id).filter((id): id is number => id !== null))];
  const sends =
    ids.length > 0
      ? await db.selectFrom('single_sends').select(['id', 'user_id', 'unsubscribe_group_id']).where('id', 'in', ids).execute()
      : [];
  const byId = new Map(sends.map((s) => [s.id, s]));
  return rows.map((r) => {
    const send = r.single_send_id === null ? undefined : byId.get(r.single_send_id);
    return send?.user_id === r.user_id ? send.unsubscribe_group_id : null;
  });
}
