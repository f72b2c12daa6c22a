/**
 * What the public pages read of a message their signed link names: the message and the unsubscribe
 * group it went under (unsubscribe and preferences pages), and the tracked link a click names, with
 * the URL it goes to (the click redirect). Reads only: what happened is recorded by the ledger.
 */
import { sql } from 'kysely';
import type { Db } from '../db/index.js';
import { fillClickUrls } from '../delivery/click-links.js';
import type { ClickRef } from '../delivery/tracking.js';
import { sourceIdOf, sourceKeys } from '../messages/ledger.js';
import type { MailKinds } from '../messages/messages.kinds.js';

export type { ClickRef };

/** A message as the public pages need it. */
export interface PublicMessage {
  id: number;
  user_id: number;
  kind: string;
  email: string;
  /** The unsubscribe group the message was sent under; null when it has none (global only). */
  groupId: number | null;
  /** The contact it was sent to; null when none. */
  contactId: number | null;
}

/**
 * The message a public link names, with the unsubscribe group it was sent under (its source's;
 * none for a kind without one); undefined when it no longer exists.
 */
export async function findPublicMessage(db: Db, kinds: MailKinds, messageId: number): Promise<PublicMessage | undefined> {
  const row = await db
    .selectFrom('mail_messages')
    .select(['id', 'user_id', 'kind', 'email', 'contact_id', ...sourceKeys(kinds)])
    .where('id', '=', messageId)
    .executeTakeFirst();
  if (!row) return undefined;
  const source = kinds.get(row.kind)?.source;
  const sourceId = sourceIdOf(kinds, row);
  let groupId: number | null = null;
  if (source && sourceId !== null) {
    const { rows } = await sql<{ group_id: number | null }>`
      select ${sql.ref(source.group)} as group_id from ${sql.table(source.table)} where id = ${sourceId}`.execute(db);
    groupId = rows[0]?.group_id ?? null;
  }
  return {
    id: row.id,
    user_id: row.user_id,
    kind: row.kind,
    email: row.email,
    groupId: groupId === null ? null : Number(groupId),
    contactId: row.contact_id === null ? null : Number(row.contact_id),
  };
}

/**
 * The name a message's reader knows its sender by: the name its campaign (a single send, an
 * automation email) was sent under, else its sender's from name today; null when it has neither.
 */
export async function findMessageSenderName(db: Db, message: Pick<PublicMessage, 'id' | 'user_id'>): Promise<string | null> {
  const row = await db
    .selectFrom('mail_messages as m')
    .leftJoin('single_sends as s', 's.id', 'm.single_send_id')
    .leftJoin('automation_schedules as a', 'a.id', 'm.automation_schedule_id')
    .select(['s.sender_name as send_name', 's.sender_id as send_sender', 'a.sender_name as email_name', 'a.sender_id as email_sender'])
    .where('m.id', '=', message.id)
    .executeTakeFirst();
  const named = (row?.send_name ?? row?.email_name ?? '').trim();
  if (named) return named;
  const senderId = row?.send_sender ?? row?.email_sender;
  if (senderId === null || senderId === undefined) return null;
  const sender = await db
    .selectFrom('senders')
    .select('from_name')
    .where('id', '=', senderId)
    .where('user_id', '=', message.user_id)
    .executeTakeFirst();
  return sender?.from_name.trim() || null;
}

/** A click on a link that belongs to its message: what the redirect needs. */
export interface ClickedLink {
  messageId: number;
  linkId: number;
  /** The link's URL as the design has it (`((placeholders))` kept). */
  url: string;
  email: string;
  payload: string | null;
  contactId: number | null;
  campaignTable: string;
  campaignId: number;
}

/** The key of a click in the maps below. */
export function clickKey(c: ClickRef): string {
  return `${c.messageId}:${c.linkId}`;
}

/**
 * The clicks (by `clickKey`) whose link belongs to their message: the link's source (where its
 * clicks are counted) is the one the message's kind names for it, in the same account. Clicks
 * naming a message or link that does not exist, or a link of another campaign, are left out.
 * Two queries, whatever the number of clicks.
 */
export async function findClickedLinks(db: Db, kinds: MailKinds, clicks: readonly ClickRef[]): Promise<Map<string, ClickedLink>> {
  const found = new Map<string, ClickedLink>();
  if (clicks.length === 0) return found;
  const messageIds = [...new Set(clicks.map((c) => c.messageId))];
  const linkIds = [...new Set(clicks.map((c) => c.linkId))];
  const [messages, links] = await Promise.all([
    db
      .selectFrom('mail_messages')
      .select(['id', 'kind', 'user_id', 'email', 'payload', 'contact_id', ...sourceKeys(kinds)])
      .where('id', 'in', messageIds)
      .execute(),
    db
      .selectFrom('tracked_links')
      .select(['id', 'user_id', 'source_table', 'source_id', 'campaign_table', 'campaign_id', 'url'])
      .where('id', 'in', linkIds)
      .execute(),
  ]);
  const messageById = new Map(messages.map((m) => [m.id, m]));
  const linkById = new Map(links.map((l) => [l.id, l]));
  for (const c of clicks) {
    const m = messageById.get(c.messageId);
    const l = linkById.get(c.linkId);
    if (!m || !l || m.user_id !== l.user_id) continue;
    if (kinds.get(m.kind)?.source?.table !== l.source_table || sourceIdOf(kinds, m) !== Number(l.source_id)) continue;
    found.set(clickKey(c), {
      messageId: m.id,
      linkId: l.id,
      url: l.url,
      email: m.email,
      payload: m.payload,
      contactId: m.contact_id,
      campaignTable: l.campaign_table,
      campaignId: Number(l.campaign_id),
    });
  }
  return found;
}

/**
 * Where each click goes (by `clickKey`): the link's URL filled for the message's recipient
 * (`fillClickUrls`, with `unsubscribeUrl`), exactly as the mail's HTML had it. Only the clicks
 * `findClickedLinks` accepts are in the map.
 */
export async function clickTargets(
  db: Db,
  kinds: MailKinds,
  clicks: readonly ClickRef[],
  unsubscribeUrl: (messageId: number) => string,
): Promise<Map<string, string>> {
  const found = await findClickedLinks(db, kinds, clicks);
  if (found.size === 0) return new Map();
  const filled = await fillClickUrls(db, [...found.values()], unsubscribeUrl);
  return new Map([...found.keys()].map((key, i) => [key, filled[i]]));
}
