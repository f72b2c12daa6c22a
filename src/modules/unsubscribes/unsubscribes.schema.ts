import { Type } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { UnsubscriberTable } from '../../db/types.js';
import { Id, Paging, PagingQuery, QueryIds } from '../../http/schemas.js';

export type UnsubscriberRow = Selectable<UnsubscriberTable>;

/** At most this many addresses per request (as many as `strIds` items in a bulk delete). */
export const MAX_ADDRESSES = 10_000;

/** A comma-separated list of addresses; each is checked by `parseEmailList`. */
const EmailList = Type.String({ maxLength: MAX_ADDRESSES * 256 });

export const SaveGlobalBody = Type.Object({ email_address: EmailList });
export const ManuallyAddBody = Type.Object({ unsubscribe_groups_id: Id, email_address: EmailList });
export const UnsubscriberIdQuery = QueryIds('id');
export const ListGlobalQuery = PagingQuery;
export const RecipientsListQuery = Type.Object({ groupId: Type.Optional(Type.String({ maxLength: 64 })), ...Paging });

/**
 * The `email` format of AJV's full mode (ajv-formats), which the other endpoints' `Email` schema
 * uses: the addresses of a list pass or fail exactly as a single `email` field would.
 */
const EMAIL =
  /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i;

/** A valid address (also used for the single address of `unsubscribeEmail`). */
export function isEmail(value: string): boolean {
  return value.length <= 254 && EMAIL.test(value);
}

/**
 * Splits a comma-separated list: each address trimmed, empty items (`a@x.io,,b@y.io,`) skipped,
 * repeats dropped case-insensitively (first spelling kept). `invalid` is true when any address is bad.
 */
export function parseEmailList(value: string): { emails: string[]; invalid: boolean } {
  const seen = new Set<string>();
  const emails: string[] = [];
  let invalid = false;
  for (const part of value.split(',')) {
    const email = part.trim();
    if (email === '') continue;
    if (!isEmail(email)) invalid = true;
    const key = email.toLowerCase();
    if (!seen.has(key)) {
      seen.add(key);
      emails.push(email);
    }
  }
  return { emails, invalid };
}

/** The API shape of a global unsubscribe or a group recipient. */
export function toUnsubscriber(row: UnsubscriberRow) {
  return {
    id: row.id,
    user_id: row.user_id,
    unsubscribe_groups_id: row.unsubscribe_groups_id,
    email_address: row.email_address,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
export type Unsubscriber = ReturnType<typeof toUnsubscriber>;
