import type { AppDeps } from '../../deps.js';
import { queryListSource } from '../../http/list-source.js';
import { NotFound, RNF, type FieldErrors } from '../../http/errors.js';
import { messages, Rules, uniqueOr } from '../../http/messages.js';
import { toId } from '../../http/schemas.js';
import {
  deleteNotificationRecipients,
  hasNotificationRecipient,
  insertNotificationRecipient,
  selectNotificationRecipients,
} from './notifications.queries.js';
import { toNotificationRecipient, type NotificationRecipientInput, type NotificationRecipientRow } from './notifications.schema.js';

/** The list source of the account's notification recipients. */
export function listNotificationRecipients(deps: AppDeps, userId: number) {
  return queryListSource(
    () => selectNotificationRecipients(deps.database.db, userId),
    'id',
    (rows: NotificationRecipientRow[]) => rows.map(toNotificationRecipient),
  );
}

/** Adds a recipient; an address the account already has is a field error (it would be mailed twice). */
export async function addNotificationRecipient(
  deps: AppDeps,
  userId: number,
  input: NotificationRecipientInput,
  schemaFailures: FieldErrors,
): Promise<number> {
  const { db } = deps.database;
  const rules = new Rules(schemaFailures);
  await rules.check('email_address', input.email_address, async (email) =>
    (await hasNotificationRecipient(db, userId, email)) ? messages.unique('email_address') : null,
  );
  rules.done();
  return uniqueOr('email_address', () => insertNotificationRecipient(db, userId, input.email_address, input.email_owner, deps.clock.now()));
}

/** Deletes one recipient of the account; not found when there is none. */
export async function deleteNotificationRecipient(deps: AppDeps, userId: number, rawId: unknown): Promise<void> {
  const id = toId(rawId);
  if (!id || (await deleteNotificationRecipients(deps.database.db, userId, [id])) === 0) throw new NotFound(RNF);
}

/** Deletes the account's recipients among `ids`; not found when none of them is. */
export async function bulkDeleteNotificationRecipients(deps: AppDeps, userId: number, ids: number[]): Promise<void> {
  if ((await deleteNotificationRecipients(deps.database.db, userId, [...new Set(ids)])) === 0) throw new NotFound(RNF);
}
