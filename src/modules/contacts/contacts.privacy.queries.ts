/**
 * The reads of a contact's data export and the per-table writes of an erasure: every function
 * takes the account and the address in lower case (`key`), and touches only that account's rows
 * (except `deleteInboundEventKeys`: the installation's inbound de-duplication keys).
 */
import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import { suppressionEntries } from '../../suppression/suppression.reads.js';
import { isoMicros } from '../../util/time.js';
import type { ExportedMessageRow } from './contacts.privacy.schema.js';

/** Every contact record of the account with the address, deleted ones too, oldest first. */
export function contactsWithAddress(db: Db, userId: number, key: string) {
  return db.selectFrom('contacts').selectAll().where('user_id', '=', userId).where('email_key', '=', key).orderBy('id').execute();
}

/** Ids of the account's live segments holding the address: as a matched contact (`contactIds`) or added by hand. */
export async function segmentIdsWithAddress(db: Db, userId: number, key: string, contactIds: number[]): Promise<number[]> {
  const rows = await db
    .selectFrom('segment_recipients as r')
    .innerJoin('segments as s', 's.id', 'r.segment_id')
    .select('r.segment_id')
    .distinct()
    .where('r.user_id', '=', userId)
    .where('s.deleted_at', 'is', null)
    .where((eb) =>
      contactIds.length ? eb.or([eb('r.email_key', '=', key), eb('r.contact_id', 'in', contactIds)]) : eb('r.email_key', '=', key),
    )
    .orderBy('r.segment_id')
    .execute();
  return rows.map((r) => r.segment_id);
}

/** The account's unsubscribe entries of the address: its group ids (null: the global list). */
export async function unsubscribeGroupsOf(db: Db, userId: number, key: string): Promise<Array<number | null>> {
  const rows = await db
    .selectFrom('unsubscribers')
    .select('unsubscribe_groups_id')
    .where('user_id', '=', userId)
    .where('email_key', '=', key)
    .orderBy('unsubscribe_groups_id')
    .execute();
  return rows.map((r) => r.unsubscribe_groups_id);
}

/** The account's suppression of the address, if any. */
export function suppressionOf(db: Db, userId: number, key: string) {
  return suppressionEntries(db, userId).where('email_key', '=', key).executeTakeFirst();
}

/** The proofs of the address's confirmed sign-ups through the account's forms, oldest first. */
export function consentsOf(db: Db, userId: number, key: string) {
  return db
    .selectFrom('contact_consents')
    .select([
      'contact_id',
      'form_id',
      'form_name',
      'signed_up_at',
      'signup_ip',
      'signup_user_agent',
      'confirmed_at',
      'confirm_ip',
      'confirm_user_agent',
      'mail_subject',
      'mail_text',
    ])
    .where('user_id', '=', userId)
    .where('email_key', '=', key)
    .orderBy('id')
    .execute();
}

/** The campaign mail of the account to the address (single sends and automation emails), oldest first. */
export function campaignMessagesTo(db: Db, userId: number, key: string): Promise<ExportedMessageRow[]> {
  return db
    .selectFrom('mail_messages as m')
    .leftJoin('single_sends as s', 's.id', 'm.single_send_id')
    .leftJoin('automations as a', 'a.id', 'm.automation_id')
    .leftJoin('automation_schedules as e', 'e.id', 'm.automation_schedule_id')
    .select([
      'm.state',
      'm.sent_at',
      'm.opens',
      'm.clicks',
      's.utr as send_utr',
      's.subject as send_subject',
      'a.utr as automation_utr',
      'e.subject as email_subject',
    ])
    .where('m.user_id', '=', userId)
    .where('m.email_key', '=', key)
    .where((eb) => eb.or([eb('m.single_send_id', 'is not', null), eb('m.automation_id', 'is not', null)]))
    .orderBy('m.id')
    .execute();
}

/** Deletes the rows of `table` of the account whose `email_key` is the address; returns how many. */
export async function deleteAddressRows(
  db: Db,
  table:
    | 'segment_recipients'
    | 'automation_enrollments'
    | 'unsubscribers'
    | 'suppressions'
    | 'soft_bounces'
    | 'webhook_events'
    | 'notification_recipients'
    | 'contact_consents'
    | 'signup_pending',
  userId: number,
  key: string,
): Promise<number> {
  const r = await db.deleteFrom(table).where('user_id', '=', userId).where('email_key', '=', key).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Deletes contact records (any state) of the account, and the hand exclusions naming them. */
export async function deleteContactRows(db: Db, userId: number, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('segment_exclusions').where('contact_id', 'in', ids).execute();
  await db.deleteFrom('contacts').where('user_id', '=', userId).where('id', 'in', ids).execute();
}

/** Clears the address where other contacts of the account hold it as their `alt_email`; returns how many. */
export async function clearAltEmails(db: Db, userId: number, key: string, now: Date): Promise<number> {
  const r = await db
    .updateTable('contacts')
    .set({ alt_email: null, updated_at: isoMicros(now) })
    .where('user_id', '=', userId)
    .where(sql`lower(alt_email)`, '=', key)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/**
 * Deletes the inbound de-duplication keys that end with the address (Amazon SES names an event
 * `<feedback id>:<address>`). They belong to no account and matter only while a provider may
 * deliver the same notification again.
 */
export async function deleteInboundEventKeys(db: Db, key: string): Promise<void> {
  const suffix = `:${key}`;
  await db
    .deleteFrom('inbound_events')
    .where(sql`length(event_key)`, '>=', suffix.length)
    .where(sql`lower(substr(event_key, length(event_key) - ${suffix.length - 1}))`, '=', suffix)
    .execute();
}

/**
 * Deletes the account's kept answers to `Idempotency-Key` requests (24 hours at most) whose body
 * names the address: a retry of such a request runs again instead of being replayed.
 */
export async function deleteKeptAnswers(db: Db, userId: number, key: string): Promise<number> {
  const r = await db.deleteFrom('idempotency_keys').where('user_id', '=', userId).where(mentions('body', key)).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** A filter: the text column holds `key` (lower case) somewhere, in any letter case. */
function mentions(column: string, key: string) {
  const pattern = `%${key.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return sql<boolean>`lower(${sql.ref(column)}) like ${pattern} escape '\\'`;
}

/** The account's segments (deleted ones too) whose condition values hold the address somewhere. */
export function segmentsNaming(db: Db, userId: number, key: string) {
  return db.selectFrom('segments').selectAll().where('user_id', '=', userId).where(mentions('value', key)).orderBy('id').execute();
}

/** Saves a segment's condition values (JSON text) as the erasure rewrote them. */
export async function setSegmentValue(db: Db, id: number, value: string, at: string): Promise<void> {
  await db.updateTable('segments').set({ value, updated_at: at }).where('id', '=', id).execute();
}

/** The account's stored webhook events whose body holds the address somewhere. */
export function webhookEventsNaming(db: Db, userId: number, key: string) {
  return db.selectFrom('webhook_events').select(['id', 'body']).where('user_id', '=', userId).where(mentions('body', key)).execute();
}

/** Saves a stored webhook event's body as the erasure rewrote it. */
export async function setWebhookEventBody(db: Db, id: number, body: string): Promise<void> {
  await db.updateTable('webhook_events').set({ body }).where('id', '=', id).execute();
}

/** Whether the message (queue row) `id` is the account's. */
export async function isMessageOf(db: Db, userId: number, id: number): Promise<boolean> {
  const row = await db.selectFrom('mail_messages').select('id').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  return row !== undefined;
}
