/**
 * A contact's data: everything the account holds about an address (export, the right of access)
 * and its erasure (the right to erasure). See docs/privacy.md.
 *
 * A table added later that holds an address adds its part in two places: a key of the export
 * (`exportAddress`) and a step of `ERASURE_STEPS`.
 */
import { sql } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Database } from '../../db/index.js';
import { NotFound, Rnf } from '../../http/errors.js';
import { erasureHash } from '../../suppression/suppression.writes.js';
import { applyAddressEvents } from '../../suppression/suppression.policy.js';
import { eraseAddress as eraseMessagesTo } from '../../messages/messages.writes.js';
import { audienceChanged } from '../audience/audience.service.js';
import { toSuppression } from '../suppressions/suppressions.schema.js';
import {
  eraseFromSegmentConditions,
  eraseFromWebhookBodies,
  outboxFilesNaming,
  removeFiles,
  type ErasureStep,
  type ErasureTarget,
} from './contacts.privacy.copies.js';
import {
  campaignMessagesTo,
  clearAltEmails,
  consentsOf,
  contactsWithAddress,
  deleteAddressRows,
  deleteContactRows,
  deleteInboundEventKeys,
  deleteKeptAnswers,
  segmentIdsWithAddress,
  suppressionOf,
  unsubscribeGroupsOf,
} from './contacts.privacy.queries.js';
import { toExportedMessage } from './contacts.privacy.schema.js';
import { softDeleteContacts } from './contacts.queries.js';
import { toContact } from './contacts.schema.js';

/** The address in the form every table compares: trimmed, lower case. */
const keyOf = (email: string) => email.trim().toLowerCase();

/** Everything the account holds about the address; not found when it holds nothing. */
export async function exportAddress({ database: { db } }: AppDeps, userId: number, email: string) {
  const key = keyOf(email);
  const contacts = await contactsWithAddress(db, userId, key);
  const live = contacts.filter((c) => c.deleted_at === null).map((c) => c.id);
  const segments = await segmentIdsWithAddress(db, userId, key, live);
  const groups = await unsubscribeGroupsOf(db, userId, key);
  const suppression = await suppressionOf(db, userId, key);
  const messages = await campaignMessagesTo(db, userId, key);
  const consents = await consentsOf(db, userId, key);
  if (contacts.length + segments.length + groups.length + messages.length === 0 && !suppression) throw new NotFound(Rnf);
  return {
    contacts: contacts.map((c) => toContact(c, 'id')),
    segments,
    unsubscribes: { global: groups.includes(null), groups: groups.filter((g) => g !== null) },
    suppression: suppression ? toSuppression(suppression) : null,
    messages: messages.map(toExportedMessage),
    consents,
  };
}

/** Deletes the account's rows of `table` with the address. */
const deleteRowsOf =
  (table: Parameters<typeof deleteAddressRows>[1]): ErasureStep =>
  (trx, t) =>
    deleteAddressRows(trx, table, t.userId, t.key);

/**
 * Every part of an erasure, in order. Contacts go first, through the delete path (segments and
 * automations follow the change), then their records are removed for good. Statistics (the
 * counters of sends, automations and links, and the hourly engagement) name no address and stay.
 */
export const ERASURE_STEPS: ErasureStep[] = [
  async (trx, t) => {
    const ids = (await contactsWithAddress(trx, t.userId, t.key)).map((c) => c.id);
    if (ids.length > 0) {
      await softDeleteContacts(trx, t.userId, ids, t.now);
      await audienceChanged(trx, t.deps, t.userId, { contactIds: ids });
      await deleteContactRows(trx, t.userId, ids);
    }
    return ids.length + (await clearAltEmails(trx, t.userId, t.key, t.now));
  },
  deleteRowsOf('segment_recipients'),
  deleteRowsOf('automation_enrollments'),
  deleteRowsOf('unsubscribers'),
  deleteRowsOf('suppressions'),
  deleteRowsOf('soft_bounces'),
  // Consents also go with their contacts (foreign key); pending sign-ups were never confirmed.
  deleteRowsOf('contact_consents'),
  deleteRowsOf('signup_pending'),
  // Its deliveries and their attempts go with each event (foreign keys).
  deleteRowsOf('webhook_events'),
  // Copies inside other data: replaced by a marker that names no one.
  eraseFromWebhookBodies,
  eraseFromSegmentConditions,
  // The account's own staff address, when it is the one erased: it is mailed no more either.
  deleteRowsOf('notification_recipients'),
  (trx, t) => eraseMessagesTo(trx, t.userId, t.key, t.now),
  // Answers kept for retries: they never make an address one the account holds either.
  async (trx, t) => {
    await deleteKeptAnswers(trx, t.userId, t.key);
    return 0;
  },
  // Not the account's rows: they never make an address one the account holds.
  async (trx, t) => {
    await deleteInboundEventKeys(trx, t.key);
    return 0;
  },
];

/**
 * Erases the address from the account's data in one transaction: every step of ERASURE_STEPS,
 * then the keyed hash that keeps the queue from mailing it again for the account. The account's
 * mail in the outbox folder that names the address is found first (file reads stay out of the
 * transaction) and deleted after the commit. Not found when no step and no file held the address.
 */
export async function eraseAddress(deps: AppDeps, userId: number, email: string): Promise<void> {
  const target: ErasureTarget = { deps, userId, key: keyOf(email), now: deps.clock.now() };
  const files = await outboxFilesNaming(deps.database.db, deps.config.outboxDir, userId, target.key);
  await deps.database.db.transaction().execute(async (trx) => {
    let held = files.length;
    for (const step of ERASURE_STEPS) held += await step(trx, target);
    if (held === 0) throw new NotFound(Rnf);
    await applyAddressEvents(trx, [{ type: 'erasure', userId, hash: erasureHash(deps.config.appSecret, target.key) }], target.now);
  });
  await removeFiles(files);
  await dropOldPages(deps.database);
}

/**
 * SQLite: copies the WAL into the database file and empties it, so the old versions of the pages
 * the erasure changed leave the WAL now rather than at some later checkpoint (`secure_delete` has
 * already zeroed the freed space in the new versions). On SQLite the server is the one process of
 * the database, so no other reader holds the WAL (a CLI command running meanwhile is waited for,
 * up to the busy timeout). PostgreSQL keeps dead row versions until VACUUM (docs/privacy.md).
 */
async function dropOldPages(database: Database): Promise<void> {
  if (database.engine === 'sqlite') await sql`pragma wal_checkpoint(TRUNCATE)`.execute(database.db);
}
