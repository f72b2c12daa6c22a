import { Type, type Static } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { NotificationRecipientTable } from '../../db/types.js';
import { Email, ListMessage, PagingQuery, QueryIds, Success, Text, Timestamp } from '../../http/schemas.js';

export type NotificationRecipientRow = Selectable<NotificationRecipientTable>;

/** `email_owner` is labelled `name` in its messages (messages.ts). */
export const SaveNotificationRecipientBody = Type.Object({ email_address: Email, email_owner: Text(255) });
export type NotificationRecipientInput = Static<typeof SaveNotificationRecipientBody>;
export const NotificationRecipientIdQuery = QueryIds('id');
export const ListNotificationRecipientsQuery = PagingQuery;

/** What `toNotificationRecipient` returns. */
export const NotificationRecipientShape = Type.Object(
  {
    id: Type.Integer(),
    user_id: Type.Integer(),
    email_address: Type.String(),
    email_owner: Type.String({ description: "Name of the address's owner." }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  {
    description:
      'An address mailed a short note on each event of the account (a single send completed, a CSV import finished, a sender verified, an automation set live or paused).',
  },
);

export const NotificationRecipientList = Success(ListMessage('notifications', NotificationRecipientShape), {
  description: "The account's notification recipients, newest first.",
});

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
