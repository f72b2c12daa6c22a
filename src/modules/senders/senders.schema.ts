import { Type, type Static } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { SenderTable } from '../../db/types.js';
import { HeaderText, Id, PagingQuery, QueryIds, Text } from '../../http/schemas.js';

export type SenderRow = Selectable<SenderTable>;

/** An address that ends up in a mail header: a valid address, and no CR/LF (contract §2). */
const HeaderEmail = Type.String({ format: 'email', maxLength: 254, pattern: '^[^\\r\\n]*$' });

/** Every parameter of save (contract §10). */
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

/** The API shape of a sender, in the spec's field order. */
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
