import { Type, type Static } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { SingleSendTable } from '../../db/types.js';
import { refsOf } from '../../delivery/audience.js';
import { designFields, TrackClicks } from '../templates/templates.schema.js';
import { abTestFields, abTestShape, toAbTest, type VariantRow } from './ab-tests.schema.js';
import { HeaderText, Id, ListMessage, Nullable, PagingQuery, QueryIds, Success, Text, Timestamp } from '../../http/schemas.js';

export type SingleSendRow = Selectable<SingleSendTable>;

/** A list of recipient keys (`contacts_<contact type id>`, `segments_<segment id>`); the service checks each. */
const RecipientKeys = Type.Array(Type.String({ maxLength: 64 }), {
  maxItems: 1000,
});

/**
 * Every parameter of create (update takes them all again, with `utr`). The rules that need the
 * database (sender, group, recipient keys, template) and those between fields (one design only,
 * the schedule) are the service's.
 */
export const singleSendFields = {
  ...designFields,
  sender_id: Id,
  unsubscribe_group_id: Id,
  single_send_name: HeaderText(),
  subject: HeaderText(),
  preheader: Text(255),
  recipient_id: Type.Array(Type.String({ maxLength: 64 }), {
    minItems: 1,
    maxItems: 1000,
  }),
  exclude_specific_recipient_id: Type.Optional(RecipientKeys),
  schedule_type: Type.Unsafe<0 | 1>({
    type: 'integer',
    enum: [0, 1],
    description: '0 = send at once, 1 = at `schedule_date` `schedule_time`.',
  }),
  schedule_date: Type.Optional(
    Type.String({
      maxLength: 32,
      description: '`YYYY-MM-DD`; required when `schedule_type` is 1.',
    }),
  ),
  schedule_time: Type.Optional(
    Type.String({
      maxLength: 32,
      description: '`HH:MM` or `HH:MM:SS`; required when `schedule_type` is 1.',
    }),
  ),
  timezone: Type.Optional(
    Type.String({
      maxLength: 64,
      description: 'IANA time zone (`Europe/Berlin`) of `schedule_date` and `schedule_time`; UTC when absent.',
    }),
  ),
  track_clicks: Type.Optional(TrackClicks),
  draft: Type.Optional(
    Type.Unsafe<0 | 1>({
      type: 'integer',
      enum: [0, 1],
      default: 0,
      description:
        '1: save the send as a draft (status 0): nothing is queued or sent, scheduled or not, until an update with `draft` 0. ' +
        '0 (default): the send is ready (status 1) and goes at once or at its schedule.',
    }),
  ),
  ...abTestFields,
};

export const CreateSingleSendBody = Type.Object(singleSendFields);
export const UpdateSingleSendBody = Type.Object({
  utr: Type.String({ maxLength: 64 }),
  ...singleSendFields,
});
export type SingleSendInput = Static<typeof CreateSingleSendBody>;
export const UtrQuery = QueryIds('utr');
export const ListSingleSendsQuery = PagingQuery;

const RecipientRef = Type.Object({
  id: Type.String({
    description: 'The contact type id or segment id, as text.',
  }),
  table: Type.String({ description: '`contacts` or `segments`.' }),
});

/** What `toSingleSend` returns: a single send in list and details. */
export const SingleSendShape = Type.Object(
  {
    id: Type.Integer(),
    user_id: Type.Integer(),
    template_id: Type.Integer(),
    recipient_id: Type.Array(RecipientRef, {
      description: 'The targets: all contacts of a contact type, or a segment.',
    }),
    exclude_specific_recipient_id: Type.Array(RecipientRef, {
      description: 'Targets whose addresses are left out.',
    }),
    sender_id: Type.Integer(),
    unsubscribe_group_id: Type.Integer(),
    single_send_name: Type.String(),
    from_sender: Type.String({
      description: "The sender's `from_email`, copied when the send was saved.",
    }),
    reply_to: Type.String({
      description: "The sender's `reply_to_email`, copied when the send was saved.",
    }),
    sender_name: Nullable(Type.String({ description: "The sender's `from_name`." })),
    sender_address: Nullable(
      Type.String({
        description: "The sender's postal address on one line (the footer's).",
      }),
    ),
    subject: Type.String(),
    preheader: Type.String(),
    schedule_type: Type.Integer({ minimum: 0, maximum: 1 }),
    schedule_date: Type.String({
      description: '`YYYY-MM-DD`; `0000-00-00` for an immediate send.',
    }),
    schedule_time: Type.String({
      description: '`HH:MM:SS`; `00:00:00` for an immediate send.',
    }),
    timezone: Nullable(
      Type.String({
        description: 'The IANA time zone of the schedule; null means UTC.',
      }),
    ),
    status: Type.Integer({
      minimum: 0,
      maximum: 3,
      description: '0 initiate (draft), 1 ready to send, 2 running, 3 completed.',
    }),
    utr: Type.String({
      description: 'Unique UUID of the single send: every endpoint names the send by it.',
    }),
    template_json: Nullable(Type.String()),
    template_html: Nullable(Type.String()),
    triggered: Type.Integer({
      description: 'Messages handed to delivery (recipients after exclusions, suppressions and dedupe).',
    }),
    delivered: Type.Integer({
      description: 'Messages the receiving SMTP server accepted.',
    }),
    unique_opens: Type.Integer(),
    total_opens: Type.Integer(),
    bounces: Type.Integer(),
    unsubscribes: Type.Integer(),
    track_clicks: Type.Integer({
      minimum: 0,
      maximum: 1,
      description: '1: the links are rewritten for click tracking; 0: left as they are.',
    }),
    unique_clicks: Type.Integer({ description: 'Recipients who clicked a tracked link at least once.' }),
    total_clicks: Type.Integer({ description: 'Clicks on tracked links, every one.' }),
    unique_open_token: Type.Record(Type.String(), Type.String(), {
      description: 'Each recipient email that opened → its open token.',
    }),
    sent_at: Nullable(
      Type.String({
        description: 'When the send completed: UTC, `YYYY-MM-DD HH:MM:SS`.',
      }),
    ),
    ...abTestShape,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  {
    description: 'A one-off mailing to contact types and segments, now or at a scheduled time, with its statistics.',
  },
);

export const SingleSendList = Success(ListMessage('singleSends', SingleSendShape), {
  description: "The account's single sends, newest first.",
});
export const SingleSendDetails = Success(
  Type.Object({
    singleSend: Type.Array(SingleSendShape, {
      minItems: 1,
      maxItems: 1,
      description: 'The one send.',
    }),
  }),
);
export const UtrAnswer = Success(Type.Object({ utr: Type.String() }), {
  description: 'Saved; the send is ready to go (status 1), or a draft (status 0) with `draft` 1.',
});
export const RecipientsCountAnswer = Success(
  Type.Object({
    count: Type.Integer({
      minimum: 0,
      description:
        'Addresses the send would go to if it started now: its targets minus exclusions, unsubscribes (global and its group), ' +
        'suppressed addresses and deleted contacts, each address once.',
    }),
  }),
);
export const DuplicatedAnswer = Type.Object(
  {
    status: Type.Literal('success'),
    message: Type.String(),
    id: Type.Integer({ description: "The copy's id." }),
    utr: Type.String({ description: "The copy's utr." }),
  },
  {
    description: 'Copied: a draft (status 0) named `<name> (copy)`, with zero statistics.',
  },
);

/**
 * The API shape of a single send; `openTokens` maps each recipient who opened to its token,
 * `variants` are its A/B test's variants 1…4.
 */
export function toSingleSend(row: SingleSendRow, openTokens: Record<string, string> = {}, variants: readonly VariantRow[] = []) {
  return {
    id: row.id,
    user_id: row.user_id,
    template_id: row.template_id,
    recipient_id: refsOf(row.recipient_id),
    exclude_specific_recipient_id: refsOf(row.exclude_specific_recipient_id),
    sender_id: row.sender_id,
    unsubscribe_group_id: row.unsubscribe_group_id,
    single_send_name: row.single_send_name,
    from_sender: row.from_sender,
    reply_to: row.reply_to,
    sender_name: row.sender_name,
    sender_address: row.sender_address,
    subject: row.subject,
    preheader: row.preheader,
    schedule_type: Number(row.schedule_type),
    schedule_date: row.schedule_date,
    schedule_time: row.schedule_time,
    timezone: row.timezone,
    status: Number(row.status),
    utr: row.utr,
    template_json: row.template_json,
    template_html: row.template_html,
    triggered: Number(row.triggered),
    delivered: Number(row.delivered),
    unique_opens: Number(row.unique_opens),
    total_opens: Number(row.total_opens),
    bounces: Number(row.bounces),
    unsubscribes: Number(row.unsubscribes),
    track_clicks: Number(row.track_clicks),
    unique_clicks: Number(row.unique_clicks),
    total_clicks: Number(row.total_clicks),
    unique_open_token: openTokens,
    sent_at: row.sent_at,
    ...toAbTest(row, variants),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
export type SingleSend = ReturnType<typeof toSingleSend>;
