import { Type, type Static } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { SenderTable } from '../../db/types.js';
import { HeaderText, Id, ListMessage, Nullable, PagingQuery, QueryIds, Success, Text, Timestamp } from '../../http/schemas.js';

export type SenderRow = Selectable<SenderTable>;

/** An address that ends up in a mail header: a valid address, and no CR or LF (no header injection). */
const HeaderEmail = Type.String({ format: 'email', maxLength: 254, pattern: '^[^\\r\\n]*$' });

/**
 * Every parameter of save (update takes them all again). The state must be one of the country's
 * and the city one of the state's (or of the country's without a state): the service checks that.
 */
export const senderFields = {
  from_name: HeaderText(),
  from_email: HeaderEmail,
  reply_to_email: HeaderEmail,
  country_id: Id,
  state_id: Type.Optional(Id),
  city_id: Type.Optional(Id),
  zip_code: Type.Optional(Text(32)),
  company_address: Text(255),
  company_address2: Type.Optional(Text(255)),
  nickname: HeaderText(),
};

export const SaveSenderBody = Type.Object(senderFields);
export const UpdateSenderBody = Type.Object({ sender_id: Id, ...senderFields });
export type SenderInput = Static<typeof SaveSenderBody>;
export const SenderIdQuery = QueryIds('sender_id');
export const ListSendersQuery = PagingQuery;

/** What `toSender` returns: a sender in list and details. */
export const SenderShape = Type.Object(
  {
    id: Type.Integer(),
    user_id: Type.Integer(),
    from_name: Type.String(),
    from_email: Type.String(),
    reply_to_email: Type.String(),
    country_id: Type.Integer(),
    state_id: Nullable(Type.Integer()),
    city_id: Nullable(Type.Integer()),
    zip_code: Nullable(Type.String()),
    company_address: Type.String(),
    company_address2: Nullable(Type.String()),
    nickname: Type.String(),
    is_verified: Type.Integer({
      minimum: 0,
      maximum: 1,
      description: '1 once the link mailed to `from_email` has been opened; a new `from_email` sets it back to 0.',
    }),
    utr: Type.String({ description: 'Unique public token of the sender.' }),
    send_at: Nullable(Type.String({ description: 'When the last verification mail was sent: UTC, `YYYY-MM-DD HH:MM:SS`.' })),
    created_at: Timestamp,
    updated_at: Timestamp,
    deleted_at: Nullable(Timestamp),
  },
  { description: 'An address campaigns are sent from; single sends and automations take only verified ones.' },
);

export const SenderList = Success(ListMessage('senders', SenderShape), { description: "The account's senders, newest first." });
export const SenderDetails = Success(Type.Object({ sender: SenderShape }));

/** The API shape of a sender (field order as the API has always shown it). */
export function toSender(row: SenderRow) {
  return {
    id: row.id,
    user_id: row.user_id,
    from_name: row.from_name,
    from_email: row.from_email,
    reply_to_email: row.reply_to_email,
    country_id: row.country_id,
    state_id: row.state_id,
    city_id: row.city_id,
    zip_code: row.zip_code,
    company_address: row.company_address,
    company_address2: row.company_address2,
    nickname: row.nickname,
    is_verified: Number(row.is_verified),
    utr: row.utr,
    send_at: row.send_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
    deleted_at: row.deleted_at,
  };
}
export type Sender = ReturnType<typeof toSender>;
