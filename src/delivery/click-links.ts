/**
 * The tracked links of campaigns: registered once per campaign when its design first renders
 * (the ids its click tokens name), and, at click time, the URL a click goes to, filled for the
 * message's recipient exactly as the message's HTML had it.
 */
import { sql } from 'kysely';
import type { Db } from '../db/index.js';
import { isoMicros } from '../util/time.js';
import { loadContacts, recipientOf } from './recipients.js';
import { recipientValues, TOKEN } from './placeholders.js';

/** Who owns a campaign's tracked links: where its statistics are counted, and the campaign itself. */
export interface LinkOwner {
  userId: number;
  /** The kind's source (`single_sends`, `automations`) and row: where the links' clicks are counted. */
  sourceTable: string;
  sourceId: number;
  /** The campaign whose design holds the links (`single_sends`, `automation_schedules`) and row. */
  campaignTable: string;
  campaignId: number;
}

/**
 * Registered link ids kept per worker, by database and then by campaign (two databases in one
 * process, as in tests, have campaigns with the same ids); bounded as the compiled designs are.
 */
const CACHE_SIZE = 32;
const registeredBy = new WeakMap<object, Map<string, Promise<number[]>>>();

async function register(db: Db, owner: LinkOwner, urls: readonly string[], at: string): Promise<number[]> {
  // Several workers may render the same campaign at once: the first insert of each position wins,
  // the others change nothing, and everyone reads the same ids back.
  await db
    .insertInto('tracked_links')
    .values(
      urls.map((url, position) => ({
        user_id: owner.userId,
        source_table: owner.sourceTable,
        source_id: owner.sourceId,
        campaign_table: owner.campaignTable,
        campaign_id: owner.campaignId,
        position,
        url,
        created_at: at,
      })),
    )
    .onConflict((oc) => oc.columns(['campaign_table', 'campaign_id', 'position']).doNothing())
    .execute();
  const rows = await db
    .selectFrom('tracked_links')
    .select(['id', 'position', 'url'])
    .where('campaign_table', '=', owner.campaignTable)
    .where('campaign_id', '=', owner.campaignId)
    .orderBy('position')
    .execute();
  const ids = urls.map((url, position) => rows.find((r) => r.position === position && r.url === url)?.id);
  // A campaign's design cannot change once it sends, so a stored link always matches; if it did
  // not, mailing a token that redirects elsewhere would be worse than failing the batch.
  if (ids.some((id) => id === undefined)) throw new Error(`the tracked links of ${owner.campaignTable} ${owner.campaignId} changed`);
  return ids as number[];
}

/**
 * The ids of a campaign's tracked links (`urls` as the compiled design lists them), registered
 * the first time; then kept by this worker while the campaign sends.
 */
export function trackedLinkIds(db: Db, owner: LinkOwner, urls: readonly string[], now: Date): Promise<number[]> {
  const key = `${owner.campaignTable}:${owner.campaignId}`;
  let registered = registeredBy.get(db);
  if (!registered) registeredBy.set(db, (registered = new Map()));
  let entry = registered.get(key);
  if (!entry) {
    entry = register(db, owner, urls, isoMicros(now));
    entry.catch(() => registered!.delete(key));
    registered.set(key, entry);
    if (registered.size > CACHE_SIZE) registered.delete(registered.keys().next().value!);
  }
  return entry;
}

/** A counted click, as `fillClickUrls` needs it. */
export interface ClickTarget {
  messageId: number;
  url: string;
  email: string;
  payload: string | null;
  contactId: number | null;
  campaignTable: string;
  campaignId: number;
}

/** The campaigns whose rows carry `sender_name` and `sender_address` (an A/B test's variant carries its send's). */
const CAMPAIGN_TABLES = new Set(['single_sends', 'automation_schedules', 'single_send_variants']);

/**
 * The URLs the clicks go to: each link's URL with its placeholders filled for the message's
 * recipient (raw values, as a mail client reads the href of the rendered HTML), the sender's
 * values from the campaign, and `unsubscribe_preferences` from `unsubscribeUrl`. A URL without
 * placeholders costs no query; the rest cost two per batch (contacts, campaigns).
 */
export async function fillClickUrls(
  db: Db,
  clicks: readonly ClickTarget[],
  unsubscribeUrl: (messageId: number) => string,
): Promise<string[]> {
  const needs = clicks.filter((c) => c.url.includes('(('));
  if (needs.length === 0) return clicks.map((c) => c.url);
  const contactIds = [...new Set(needs.map((c) => c.contactId).filter((id): id is number => id !== null))];
  const contacts = await loadContacts(db, contactIds);
  const senders = new Map<string, { sender_name: string; sender_address: string }>();
  for (const table of new Set(needs.map((c) => c.campaignTable))) {
    if (!CAMPAIGN_TABLES.has(table)) continue;
    const ids = [...new Set(needs.filter((c) => c.campaignTable === table).map((c) => c.campaignId))];
    const { rows } = await sql<{ id: number; sender_name: string | null; sender_address: string | null }>`
      select id, sender_name, sender_address from ${sql.table(table)} where id in (${sql.join(ids)})`.execute(db);
    for (const r of rows) senders.set(`${table}:${r.id}`, { sender_name: r.sender_name ?? '', sender_address: r.sender_address ?? '' });
  }
  return clicks.map((c) => {
    if (!c.url.includes('((')) return c.url;
    const values: Record<string, string> = {
      ...senders.get(`${c.campaignTable}:${c.campaignId}`),
      ...recipientValues(recipientOf(c, c.contactId === null ? undefined : contacts.get(c.contactId))),
      unsubscribe_preferences: unsubscribeUrl(c.messageId),
    };
    return c.url.replace(TOKEN, (_, name: string) => values[name.toLowerCase()] ?? '');
  });
}

/**
 * A URL as a `Location` header can carry it: the characters a header cannot hold (controls,
 * spaces, anything beyond ASCII) percent-encoded as a browser encodes them when it follows the
 * link; every other character as it is, so the redirect goes exactly where the link pointed.
 */
export function locationOf(url: string): string {
  // eslint-disable-next-line no-control-regex
  return url.replace(/[\u0000-\u0020\u007f-\uffff]+/g, (run) => {
    try {
      return encodeURI(run);
    } catch {
      // A lone surrogate cannot be encoded: it is dropped, as browsers replace it.
      return encodeURI(run.replace(/[\ud800-\udfff]/g, '\ufffd'));
    }
  });
}
