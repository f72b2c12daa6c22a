/**
 * The mail of each recipient of a single send, made when a worker is about to send it: the design
 * compiled once per send (and kept while the send runs), then per recipient only string joins of
 * the recipient's values into it, and the headers.
 */
import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/index.js';
import { recipientValues, type RecipientInput } from '../../delivery/placeholders.js';
import { compileDesign, OPEN_PIXEL, renderFor, type CompiledDesign } from '../../delivery/render.js';
import { trackingLinks } from '../../delivery/tracking.js';
import type { MailMessage } from '../../delivery/transport.js';
import type { QueuedMessage, Rendered } from '../../queue/queue.types.js';
import type { SingleSendRow } from './single-sends.schema.js';

/**
 * Compiled designs kept per worker, by send id. A send's design cannot change once it runs
 * (update answers 409), so an entry never goes stale; the bound keeps memory flat when many sends
 * run at once (the oldest entry goes first; a send evicted is compiled again, nothing worse).
 */
const CACHE_SIZE = 32;
const compiled = new Map<number, Promise<CompiledDesign>>();

/** The send's compiled design: subject, preheader, footer where the design lacks it, open pixel. */
export function compiledFor(send: SingleSendRow): Promise<CompiledDesign> {
  let entry = compiled.get(send.id);
  if (!entry) {
    entry = compileDesign({
      design: {
        templateId: send.template_id,
        templateJson: send.template_json,
        templateHtml: send.template_html,
      },
      subject: send.subject,
      preheader: send.preheader,
      footer: true,
      openPixel: true,
    });
    // A failure is not kept: the next batch tries again.
    entry.catch(() => compiled.delete(send.id));
    compiled.set(send.id, entry);
    if (compiled.size > CACHE_SIZE) compiled.delete(compiled.keys().next().value!);
  }
  return entry;
}

/** How many compiled designs this worker keeps (for tests of the bound). */
export function compiledDesignsCached(): number {
  return compiled.size;
}

type ContactRow = RecipientInput & {
  id: number;
  user_id: number;
  custom_field: string | null;
  deleted_at: string | null;
};

async function loadContacts(db: Db, ids: number[]): Promise<Map<number, ContactRow>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('contacts')
    .select([
      'id',
      'user_id',
      'first_name',
      'last_name',
      'email',
      'alt_email',
      'country',
      'state',
      'city',
      'address_line1',
      'address_line2',
      'state_province_region',
      'postal_code',
      'custom_field',
      'deleted_at',
    ])
    .where('id', 'in', ids)
    .execute();
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * The addresses of the batch that must not be mailed any more, as `user:key` (global unsubscribe
 * or hard bounce) and `user:key:group` (group unsubscribe), read in one query.
 */
async function loadSuppressions(db: Db, rows: QueuedMessage[]): Promise<Set<string>> {
  const keys = [...new Set(rows.map((r) => r.email_key))];
  const users = [...new Set(rows.map((r) => r.user_id))];
  const found = await db
    .selectFrom('unsubscribers')
    .select(['user_id', 'email_key', 'unsubscribe_groups_id as group_id'])
    .where('user_id', 'in', users)
    .where('email_key', 'in', keys)
    .unionAll(
      db
        .selectFrom('bounced_addresses')
        .select(['user_id', 'email_key', (eb) => eb.cast<number | null>(eb.val(null), 'integer').as('group_id')])
        .where('user_id', 'in', users)
        .where('email_key', 'in', keys),
    )
    .execute();
  return new Set(found.map((f) => (f.group_id === null ? `${f.user_id}:${f.email_key}` : `${f.user_id}:${f.email_key}:${f.group_id}`)));
}

function parseJson<T>(text: string | null): T | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}

/** The host of PUBLIC_URL: the right-hand side of our Message-IDs. */
function messageIdHost(publicUrl: string): string {
  try {
    return new URL(publicUrl).hostname || 'localhost';
  } catch {
    return 'localhost';
  }
}

/**
 * Renders a batch of claimed `single_send` messages, in order. A message of a deleted send is
 * cancelled; one whose address was unsubscribed (globally or from the send's group) or bounced,
 * or whose contact was deleted, since the send started is suppressed. Three queries per batch
 * (sends, contacts, suppressions), however many recipients it holds.
 */
export async function renderSingleSendBatch(deps: AppDeps, rows: QueuedMessage[]): Promise<Rendered[]> {
  if (rows.length === 0) return [];
  const { db } = deps.database;
  const sendIds = [...new Set(rows.map((r) => r.single_send_id).filter((id): id is number => id !== null))];
  const contactIds = [...new Set(rows.map((r) => r.contact_id).filter((id): id is number => id !== null))];
  const [sendRows, contacts, suppressed] = await Promise.all([
    sendIds.length > 0 ? db.selectFrom('single_sends').selectAll().where('id', 'in', sendIds).execute() : [],
    loadContacts(db, contactIds),
    loadSuppressions(db, rows),
  ]);
  const sends = new Map(sendRows.map((s) => [s.id, s]));
  const links = trackingLinks(deps.config);
  const host = messageIdHost(deps.config.publicUrl);
  const out: Rendered[] = [];
  for (const row of rows) {
    // A batch holds several accounts' messages: a send or contact is used only by its own account's rows.
    const send = row.single_send_id === null ? undefined : sends.get(row.single_send_id);
    if (!send || send.user_id !== row.user_id || send.deleted_at !== null) {
      out.push({ skip: 'cancelled', reason: 'the single send was deleted' });
      continue;
    }
    const found = row.contact_id === null ? undefined : contacts.get(row.contact_id);
    const contact = found?.user_id === row.user_id ? found : undefined;
    const why = suppressed.has(`${row.user_id}:${row.email_key}`)
      ? 'unsubscribed from every mail, or bounced'
      : suppressed.has(`${row.user_id}:${row.email_key}:${send.unsubscribe_group_id}`)
        ? "unsubscribed from the send's group"
        : row.contact_id !== null && (!contact || contact.deleted_at !== null)
          ? 'the contact was deleted'
          : null;
    if (why) {
      out.push({ skip: 'suppressed', reason: why });
      continue;
    }
    const design = await compiledFor(send);
    out.push({ message: messageFor(send, row, design, contact, links, host) });
  }
  return out;
}

/** One recipient's mail: personalised parts and the headers of a bulk mail (RFC 8058 one-click unsubscribe). */
function messageFor(
  send: SingleSendRow,
  row: QueuedMessage,
  design: CompiledDesign,
  contact: ContactRow | undefined,
  links: ReturnType<typeof trackingLinks>,
  host: string,
): MailMessage {
  const recipient: RecipientInput = contact
    ? {
        ...contact,
        custom: parseJson<Record<string, string>>(contact.custom_field),
      }
    : {
        ...parseJson<{ first_name?: string; last_name?: string }>(row.payload),
        email: row.email,
      };
  const unsubscribeUrl = links.unsubscribeUrl(row.id);
  const values = {
    ...recipientValues(recipient),
    unsubscribe_preferences: unsubscribeUrl,
    [OPEN_PIXEL]: links.openUrl(row.id),
  };
  const shared = {
    sender_name: send.sender_name ?? '',
    sender_address: send.sender_address ?? '',
  };
  const { subject, html, text } = renderFor(design, values, shared);
  // The service receives no mail: the mailto reaches the sender's reply-to mailbox, whose reader
  // can unsubscribe the address named by the token in the subject.
  const mailto = `mailto:${send.reply_to}?subject=${encodeURIComponent(`unsubscribe ${links.unsubscribeToken(row.id)}`)}`;
  return {
    from: { name: send.sender_name ?? '', address: send.from_sender },
    to: row.email,
    replyTo: send.reply_to,
    subject,
    html,
    text,
    messageId: row.message_id ?? `${randomUUID()}@${host}`,
    headers: {
      'List-Unsubscribe': `<${unsubscribeUrl}>, <${mailto}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    },
  };
}
