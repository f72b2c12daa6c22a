/**
 * The mail of each recipient of a campaign (a single send, or an automation email), made when a
 * worker is about to send it: the design compiled once per campaign (kept while it runs), then per
 * recipient only string joins of the recipient's values into it, and the headers. Suppression is
 * checked before this, once per claimed batch, by the mail lane (src/suppression/): a row that
 * reaches the renderer may be mailed.
 */
import type { Config } from '../config.js';
import type { Database, Db } from '../db/index.js';
import type { QueuedMessage } from '../db/types.js';
import type { Clock } from '../util/clock.js';
import { mailtoAddress } from '../util/email.js';
import { trackedLinkIds, type LinkOwner } from './click-links.js';
import { recipientValues } from './placeholders.js';
import { loadContacts, recipientOf, type ContactRow } from './recipients.js';
import { CLICK_SLOT, compileDesign, OPEN_PIXEL, renderFor, type CompileInput, type CompiledDesign } from './render.js';
import { trackingLinks } from './tracking.js';
import { TRAP_SLOT } from './trap-link.js';
import type { MailMessage, Rendered } from './transport.js';

/** What the messages of one campaign share: its account, design, sender and unsubscribe group. */
export interface CampaignSource {
  userId: number;
  /** Why its messages must not go any more (it was deleted), or null. */
  cancelled: string | null;
  /** The compiled design (see `compiledOnce`). */
  design: () => Promise<CompiledDesign>;
  /** Who owns the design's tracked links (compiled with `trackClicks`); null: its links are not tracked. */
  clicks: LinkOwner | null;
  fromSender: string;
  replyTo: string;
  senderName: string | null;
  senderAddress: string | null;
}

/**
 * Compiled designs kept per worker, by database, then by campaign key. A campaign's design cannot
 * change once it sends (a running single send cannot be updated; an automation email cannot be
 * edited), so an entry never goes stale; the bound keeps memory flat when many run at once (the
 * oldest entry goes first; one evicted is compiled again, nothing worse). The keys name rows by
 * id, so each database has its own entries: two in one process (tests, several installations)
 * never share a design; one dropped takes its entries with it.
 */
const CACHE_SIZE = 32;
const compiled = new WeakMap<Db, Map<string, Promise<CompiledDesign>>>();

/** The compiled design of campaign `key` of `db`, compiled at most once while it stays in the cache. */
export function compiledOnce(db: Db, key: string, input: () => CompileInput): Promise<CompiledDesign> {
  let cache = compiled.get(db);
  if (!cache) compiled.set(db, (cache = new Map()));
  let entry = cache.get(key);
  if (!entry) {
    entry = compileDesign(input());
    // A failure is not kept: the next batch tries again.
    const own = cache;
    entry.catch(() => own.delete(key));
    cache.set(key, entry);
    if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
  }
  return entry;
}

/** How many compiled designs this worker keeps for `db` (for tests of the bound). */
export function compiledDesignsCached(db: Db): number {
  return compiled.get(db)?.size ?? 0;
}

/**
 * Renders a batch of claimed campaign messages, in order; `sourceOf` names each row's campaign. A
 * message whose campaign is gone or deleted is cancelled; one whose contact was deleted since it
 * was queued is suppressed. One query per batch (contacts) besides the caller's.
 */
export async function renderCampaignBatch(
  deps: { database: Database; config: Config; clock: Clock },
  rows: QueuedMessage[],
  sourceOf: (row: QueuedMessage) => CampaignSource | undefined,
): Promise<Rendered[]> {
  if (rows.length === 0) return [];
  const { db } = deps.database;
  const contactIds = [...new Set(rows.map((r) => r.contact_id).filter((id): id is number => id !== null))];
  const contacts = await loadContacts(db, contactIds);
  const links = trackingLinks(deps.config);
  const out: Rendered[] = [];
  for (const row of rows) {
    // A batch holds several accounts' messages: a campaign or contact is used only by its own account's rows.
    const found = sourceOf(row);
    const source = found?.userId === row.user_id ? found : undefined;
    if (!source || source.cancelled !== null) {
      out.push({ skip: 'cancelled', reason: source?.cancelled ?? 'what sent it no longer exists' });
      continue;
    }
    const candidate = row.contact_id === null ? undefined : contacts.get(row.contact_id);
    const contact = candidate?.user_id === row.user_id ? candidate : undefined;
    if (row.contact_id !== null && (!contact || contact.deleted_at !== null)) {
      out.push({ skip: 'suppressed', reason: 'the contact was deleted' });
      continue;
    }
    const design = await source.design();
    // The links' ids are registered once per campaign (per worker), when its design first renders.
    const linkIds = source.clicks && design.links.length > 0 ? await trackedLinkIds(db, source.clicks, design.links, deps.clock.now()) : [];
    out.push({ message: messageFor(source, row, design, linkIds, contact, links, Boolean(deps.config.postmarkWebhookAuth)) });
  }
  return out;
}

/** One recipient's mail: personalised parts and the headers of a bulk mail (RFC 8058 one-click unsubscribe). */
function messageFor(
  source: CampaignSource,
  row: QueuedMessage,
  design: CompiledDesign,
  linkIds: readonly number[],
  contact: ContactRow | undefined,
  links: ReturnType<typeof trackingLinks>,
  postmarkMetadata: boolean,
): MailMessage {
  const unsubscribeUrl = links.unsubscribeUrl(row.id);
  const values: Record<string, string> = {
    ...recipientValues(recipientOf(row, contact)),
    unsubscribe_preferences: unsubscribeUrl,
    [OPEN_PIXEL]: links.openUrl(row.id),
  };
  for (let i = 0; i < linkIds.length; i++) values[CLICK_SLOT + i] = links.clickUrl(row.id, linkIds[i]);
  if (linkIds.length > 0) values[TRAP_SLOT] = links.trapUrl(row.id);
  const shared = { sender_name: source.senderName ?? '', sender_address: source.senderAddress ?? '' };
  const { subject, html, text } = renderFor(design, values, shared);
  // The service receives no mail: the mailto reaches the sender's reply-to mailbox, whose reader
  // can unsubscribe the address named by the token in the subject. The address is percent-encoded
  // (RFC 6068): a valid local part may hold `?`, `#`, `&` or `%`, which would break the URI.
  const mailto = `mailto:${mailtoAddress(source.replyTo)}?subject=${encodeURIComponent(`unsubscribe ${links.unsubscribeToken(row.id)}`)}`;
  return {
    from: { name: source.senderName ?? '', address: source.fromSender },
    to: row.email,
    replyTo: source.replyTo,
    subject,
    html,
    text,
    messageId: links.messageId(row.id),
    // VERP (BOUNCE_ADDRESS): bounces come back to an address that names this message.
    envelopeFrom: links.verpAddress(row.id) ?? undefined,
    headers: {
      'List-Unsubscribe': `<${unsubscribeUrl}>, <${mailto}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      // Postmark hands metadata back in its bounce and spam webhooks: the message's VERP token.
      ...(postmarkMetadata ? { 'X-PM-Metadata-message_ref': links.verpToken(row.id) } : {}),
    },
  };
}
