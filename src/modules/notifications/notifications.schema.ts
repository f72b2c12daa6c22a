import { Type, type Static } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { NotificationRecipientTable } from '../../db/types.js';
import { Email, PagingQuery, QueryIds, Text } from '../../http/schemas.js';

export type NotificationRecipientRow = Selectable<NotificationRecipientTable>;

/** `email_owner` is labelled `name` in its messages (messages.ts). */
export const SaveNotificationRecipientBody = Type.Object({ email_address: Email, email_owner: Text(255) });
export type NotificationRecipientInput = Static<typeof SaveNotificationRecipientBody>;
export const NotificationRecipientIdQuery = QueryIds('id');
export const ListNotificationRecipientsQuery = PagingQuery;

/** The API shape of a notification recipient. */
export function toNotificationRecipient(row: NotificationRecipientRow) {
  return {
    id: row.id,
    user_id: row.user_id,
    email_address: row.email_address,
    email_owner: row.email_owner,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
export type NotificationRecipient = ReturnType<typeof toNotificationRecipient>;
