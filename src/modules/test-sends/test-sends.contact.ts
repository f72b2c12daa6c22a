/**
 * Whose data fills a test mail or a preview: the contact the caller names (`contact_id`, one of
 * the account's live contacts), else the first recipient of the send or automation email. Naming
 * or reading a contact's data this way takes `contacts.read` besides the route's own scope.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import { engineOf } from '../../db/dialect.js';
import { refsOf, targets, type RecipientRef } from '../../delivery/audience.js';
import { messages, type Rules } from '../../http/messages.js';
import { notAllowed, type Principal } from '../../http/principal.js';
import { allows } from '../../http/scopes.js';

/** The contact whose data fills a test or a preview, as the answers show it. */
export interface FillContact {
  id: number;
  email: string;
  first_name: string | null;
  last_name: string | null;
}

/** What decides an audience: the stored target lists (JSON text), as a send keeps them. */
export interface AudienceLists {
  include: readonly RecipientRef[];
  exclude: readonly RecipientRef[];
}

/** A single send's audience. */
export function sendAudience(send: { recipient_id: string; exclude_specific_recipient_id: string }): AudienceLists {
  return { include: refsOf(send.recipient_id), exclude: refsOf(send.exclude_specific_recipient_id) };
}

/** An automation's audience: the one contact type or segment it runs for. */
export async function automationAudience(db: Db, userId: number, automationId: number): Promise<AudienceLists> {
  const row = await db
    .selectFrom('automations')
    .select(['automation_for', 'automation_for_table'])
    .where('id', '=', automationId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  const table = row?.automation_for_table;
  return { include: table === 'contacts' || table === 'segments' ? [{ id: String(row!.automation_for), table }] : [], exclude: [] };
}

/** One of the account's live contacts, as a FillContact; undefined when unknown, deleted or another account's. */
export function findFillContact(db: Db, userId: number, id: number): Promise<FillContact | undefined> {
  return db
    .selectFrom('contacts')
    .select(['id', 'email', 'first_name', 'last_name'])
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

/**
 * The first recipient of an audience: of the contacts its targets name, less the excluded
 * addresses, the oldest (lowest id). Suppression is not looked at: a test or a preview only
 * borrows the contact's data. Undefined when the audience names no contact.
 */
export async function firstRecipient(db: Db, userId: number, audience: AudienceLists): Promise<FillContact | undefined> {
  if (audience.include.length === 0) return undefined;
  const engine = engineOf(db);
  const { rows } = await sql<{ id: number | null }>`
    with targets as (${targets(engine, userId, audience.include)}),
    excluded as (${targets(engine, userId, audience.exclude)})
    select min(t.contact_id) as id from targets t
    where t.contact_id is not null
      and not exists (select 1 from excluded x where x.email_key = t.email_key)`.execute(db);
  const id = rows[0]?.id;
  return id === null || id === undefined ? undefined : findFillContact(db, userId, Number(id));
}

/**
 * The contact whose data fills a test or a preview: `contactId` when given (a 422 on `contact_id`
 * in `rules` when it is not one of the account's live contacts; a 403 when the caller may not read
 * contacts), else the audience's first recipient when the caller may read contacts, else none.
 */
export async function fillContactFor(
  db: Db,
  principal: Principal,
  contactId: number | undefined,
  rules: Rules,
  audience: () => Promise<AudienceLists>,
): Promise<FillContact | undefined> {
  const mayRead = allows(principal.grant, 'contacts.read');
  if (contactId === undefined) return mayRead ? firstRecipient(db, principal.account, await audience()) : undefined;
  if (rules.failed('contact_id')) return undefined;
  if (!mayRead) throw notAllowed(principal.actor, 'contacts.read');
  const contact = await findFillContact(db, principal.account, contactId);
  if (!contact) rules.add('contact_id', messages.invalid('contact_id'));
  return contact;
}
