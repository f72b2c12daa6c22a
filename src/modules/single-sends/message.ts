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
import { selectVariants } from './ab-tests.queries.js';
import type { VariantRow } from './ab-tests.schema.js';

/**
 * The send's compiled design (or its A/B test variant's: its subject, and its own design if it
 * has one): subject, preheader, footer where the design lacks it, open pixel, click slots unless
 * `track_clicks` is 0 (a test mail's links are left alone: it counts nowhere). A test mail's
 * subject starts with `[Test] `; a draft can still change, so its design is cached by the version
 * of the row it was made from.
 */
export function compiledFor(db: Db, send: SingleSendRow, test = false, variant: VariantRow | null = null): Promise<CompiledDesign> {
  const name = variant ? `single_send:${send.id}:${variant.variant}` : `single_send:${send.id}`;
  const key = test ? `test:${name}:${send.updated_at}` : name;
  const subject = variant?.subject ?? send.subject;
  return compiledOnce(db, key, () => ({
    design: designOf(send, variant),
    subject: test ? `[Test] ${subject}` : subject,
    preheader: send.preheader,
    footer: true,
    openPixel: true,
    trackClicks: !test && send.track_clicks !== 0,
  }));
}

/** The design a send's mail (or its A/B test variant's) is made from: the variant's own, else the send's. */
export function designOf(send: SingleSendRow, variant: VariantRow | null) {
  const own = variant && hasOwnDesign(variant) ? variant : null;
  return own
    ? { templateId: own.template_id ?? send.template_id, templateJson: own.template_json, templateHtml: own.template_html }
    : { templateId: send.template_id, templateJson: send.template_json, templateHtml: send.template_html };
}

/** Whether a variant has a design of its own (else it has the send's). */
export function hasOwnDesign(variant: VariantRow): boolean {
  return variant.template_id !== null || variant.template_json !== null || variant.template_html !== null;
}

/**
 * A send as the campaign renderer sees it (for a test mail: its `[Test] ` version; with a
 * variant: that variant of its A/B test, whose own design's tracked links are its own campaign's).
 */
export function sendSource(db: Db, send: SingleSendRow, test = false, variant: VariantRow | null = null): CampaignSource {
  const ownLinks = variant !== null && hasOwnDesign(variant);
  return {
    userId: send.user_id,
    cancelled: send.deleted_at !== null ? 'the single send was deleted' : null,
    design: () => compiledFor(db, send, test, variant),
    clicks:
      test || send.track_clicks === 0
        ? null
        : {
            userId: send.user_id,
            sourceTable: 'single_sends',
            sourceId: send.id,
            campaignTable: ownLinks ? 'single_send_variants' : 'single_sends',
            campaignId: ownLinks ? variant.id : send.id,
          },
    fromSender: send.from_sender,
    replyTo: send.reply_to,
    senderName: send.sender_name,
    senderAddress: send.sender_address,
  };
}

/**
 * The variant a message of an A/B test carries: its own (`ab_variant`, the test share), else the
 * send's winner (the winner's send); 0, the send itself, without a test.
 */
export function variantOf(send: Pick<SingleSendRow, 'ab_test' | 'ab_winner'>, row: Pick<QueuedMessage, 'ab_variant'>): number {
  if (Number(send.ab_test) !== 1) return 0;
  return Number(row.ab_variant ?? send.ab_winner ?? 0);
}

/**
 * Renders a batch of claimed `single_send` messages, in order (see `renderCampaignBatch`): one
 * query for their sends, one for the variants of those with an A/B test, then the shared
 * renderer's two. A message whose variant no longer exists is cancelled, as one of a deleted send.
 */
export async function renderSingleSendBatch(deps: AppDeps, rows: QueuedMessage[]): Promise<Rendered[]> {
  const { db } = deps.database;
  const ids = [...new Set(rows.map((r) => r.single_send_id).filter((id): id is number => id !== null))];
  const sends = ids.length > 0 ? await db.selectFrom('single_sends').selectAll().where('id', 'in', ids).execute() : [];
  const variants = await selectVariants(
    db,
    sends.filter((s) => Number(s.ab_test) === 1).map((s) => s.id),
  );
  const variantRows = new Map(variants.map((v) => [`${v.single_send_id}:${v.variant}`, v]));
  const byId = new Map(sends.map((s) => [s.id, s]));
  const sources = new Map<string, CampaignSource | undefined>();
  const sourceOf = (row: QueuedMessage): CampaignSource | undefined => {
    const send = row.single_send_id === null ? undefined : byId.get(row.single_send_id);
    if (!send) return undefined;
    const index = variantOf(send, row);
    const key = `${send.id}:${index}`;
    if (!sources.has(key)) {
      const variant = index === 0 ? null : variantRows.get(key);
      sources.set(key, variant === undefined ? undefined : sendSource(db, send, false, variant));
    }
    return sources.get(key);
  };
  return renderCampaignBatch(deps, rows, sourceOf);
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
