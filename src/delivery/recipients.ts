/** The recipient of a campaign message as rendering reads it: its contact, or the names queued with it. */
import type { Db } from '../db/index.js';
import type { QueuedMessage } from '../db/types.js';
import type { RecipientInput } from './placeholders.js';

/** A contact as rendering reads it. */
export type ContactRow = RecipientInput & {
  id: number;
  user_id: number;
  custom_field: string | null;
  deleted_at: string | null;
};

/** The contacts of the given ids, by id, with what rendering reads (one query). */
export async function loadContacts(db: Db, ids: number[]): Promise<Map<number, ContactRow>> {
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

function parseJson<T>(text: string | null): T | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}

/** A message's recipient as its placeholders read it: its contact, or the names queued with it. */
export function recipientOf(message: Pick<QueuedMessage, 'email' | 'payload'>, contact: ContactRow | undefined): RecipientInput {
  return contact
    ? { ...contact, custom: parseJson<Record<string, string>>(contact.custom_field) }
    : { ...parseJson<{ first_name?: string; last_name?: string }>(message.payload), email: message.email };
}
