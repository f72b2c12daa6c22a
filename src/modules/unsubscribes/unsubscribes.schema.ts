import { Type } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { UnsubscriberTable } from '../../db/types.js';
import { Id, ListMessage, Nullable, OkCreated, Paging, PagingQuery, QueryIds, Success, Timestamp } from '../../http/schemas.js';
import { isEmail } from '../../util/email.js';

export type UnsubscriberRow = Selectable<UnsubscriberTable>;

/** At most this many addresses per request (as many as `strIds` items in a bulk delete). */
export const MAX_ADDRESSES = 10_000;

/** A comma-separated list of addresses; each is checked by `parseEmailList`. */
const EmailList = Type.String({
  maxLength: MAX_ADDRESSES * 256,
  description: `Addresses separated by commas (at most ${MAX_ADDRESSES}); blanks are skipped, an address already on the list is kept once.`,
});

export const SaveGlobalBody = Type.Object({ email_address: EmailList });
export const ManuallyAddBody = Type.Object({ unsubscribe_groups_id: Id, email_address: EmailList });
export const UnsubscriberIdQuery = QueryIds('id');
export const ListGlobalQuery = PagingQuery;
export const RecipientsListQuery = Type.Object({ groupId: Type.Optional(Type.String({ maxLength: 64 })), ...Paging });

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

/** What `toUnsubscriber` returns: an entry of the global list or a group's recipient. */
export const UnsubscriberShape = Type.Object(
  {
    id: Type.Integer(),
    user_id: Type.Integer(),
    unsubscribe_groups_id: Nullable(Type.Integer({ description: 'The group; null for a global unsubscribe.' })),
    email_address: Type.String(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { description: 'An address that gets no mail: from the account at all (global) or sent under one unsubscribe group.' },
);

/** The global list (`unSubscribers`). */
export const GlobalUnsubscribeList = Success(ListMessage('unSubscribers', UnsubscriberShape), {
  description: "The account's global unsubscribes, newest first.",
});
/** A group's recipients (`recipients`). */
export const GroupRecipientList = Success(ListMessage('recipients', UnsubscriberShape), {
  description: "The group's recipients, newest first.",
});

/** The answer of an add: `id` of the first address's entry and `ids` of every address's, in input order. */
export const OkAdded = Type.Object({
  ...OkCreated.properties,
  id: Type.Integer({ description: 'The entry of the first address.' }),
  ids: Type.Array(Type.Integer(), {
    description: 'The entry of each address sent, in order (an address already on the list keeps its entry).',
  }),
});

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
