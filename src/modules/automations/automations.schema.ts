import { Type, type Static } from '@sinclair/typebox';
import type { Config } from '../../config.js';
import {
  Enum,
  FieldMessages,
  HeaderText,
  Id,
  Int,
  ListOf,
  Nullable,
  PagingQuery,
  QueryIds,
  Success,
  Text,
  Timestamp,
} from '../../http/schemas.js';
import { sqlDateTime } from '../../util/time.js';
import { designFields, TrackClicks } from '../templates/templates.schema.js';
import { previewImageUrl } from '../templates/templates.rules.js';
import type { AutomationRow, AutomationScheduleRow } from './automations.types.js';

/** `type` of create → the stored `automation_type`. */
export const TYPE_NAMES = ['welcome', 'custom'] as const;

/** The longest wait an email may have: ten years in hours (far longer in days, but still a real date). */
export const MAX_WAITING_PERIOD = 87_600;

/**
 * Create's parameters. Which target, group and exit rule are the account's is checked by the
 * service; the schema says what each is.
 */
export const CreateAutomationBody = Type.Object({
  type: Enum(TYPE_NAMES),
  automation_for: Type.String({
    maxLength: 64,
    description: 'The target: `contacts_<contact type id>` (every contact of the type) or `segments_<segment id>`.',
  }),
  automation_name: Text(),
  unsubscribe_group_id: Id,
  exit_criteria: Type.Optional(
    Type.Unsafe<0 | 1>({
      type: 'integer',
      enum: [0, 1],
      default: 0,
      description: '0 (default): every enrolled contact gets every email; 1: a contact who leaves the target also leaves the automation.',
    }),
  ),
});
export type CreateAutomationInput = Static<typeof CreateAutomationBody>;

/**
 * Update's parameters: the automation's `utr` and its fields as create takes them, with the same
 * rules; `type` cannot change. `exit_criteria` left out keeps the current value.
 */
export const UpdateAutomationBody = Type.Object({
  utr: Type.String({ maxLength: 64, description: "The automation's utr." }),
  automation_for: CreateAutomationBody.properties.automation_for,
  automation_name: Text(),
  unsubscribe_group_id: Id,
  exit_criteria: Type.Optional(
    Type.Unsafe<0 | 1>({
      type: 'integer',
      enum: [0, 1],
      description: '0: every enrolled contact gets every email; 1: a contact who leaves the target also leaves. Left out: unchanged.',
    }),
  ),
});
export type UpdateAutomationInput = Static<typeof UpdateAutomationBody>;

/** Schedule create's parameters: one timed email of the automation named by `utr`. */
export const CreateScheduleBody = Type.Object({
  utr: Type.String({ maxLength: 64, description: "The automation's utr." }),
  sender_id: Id,
  subject: HeaderText(),
  waiting_period: Int({
    minimum: 0,
    maximum: MAX_WAITING_PERIOD,
    description: 'How many `waiting_type` units the email waits after the previous one (ignored for `instantly`; clients send 1).',
  }),
  waiting_type: Enum(['instantly', 'days', 'hours'] as const),
  ...designFields,
  preview_img: Text(),
  track_clicks: Type.Optional(TrackClicks),
});
export type CreateScheduleInput = Static<typeof CreateScheduleBody>;

export const UtrQuery = QueryIds('utr');
export const ListAutomationsQuery = PagingQuery;

const automationFields = {
  id: Type.Integer(),
  user_id: Type.Integer(),
  automation_for: Type.Integer({ description: 'The contact type id or segment id of the target.' }),
  automation_for_table: Type.String({ description: '`contacts` (a contact type) or `segments`.' }),
  automation_name: Type.String(),
  exit_criteria: Type.Integer({
    minimum: 0,
    maximum: 1,
    description: '0 run every email; 1 also leave when the contact leaves the target.',
  }),
  unsubscribe_group_id: Nullable(Type.String({ description: 'The unsubscribe group id, as text.' })),
  automation_type: Type.Integer({ minimum: 1, maximum: 2, description: '1 welcome, 2 custom.' }),
  utr: Type.String({ description: 'Unique UUID of the automation: every endpoint names it by this.' }),
  status: Type.Integer({ minimum: 0, maximum: 1, description: '0 draft (or paused, when `live_at` is set), 1 live.' }),
  live_at: Nullable(Type.String({ description: 'When it first went live: UTC, `YYYY-MM-DD HH:MM:SS`.' })),
  total_triggered: Type.Integer({ description: 'Messages of its emails handed to delivery.' }),
  total_delivered: Type.Integer(),
  total_unique_opens: Type.Integer(),
  total_opens: Type.Integer(),
  total_bounces: Type.Integer(),
  total_unsubscribe: Type.Integer(),
  deleted_at: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
};

/** An automation in details. */
export const AutomationShape = Type.Object(automationFields, {
  description: 'A sequence of timed emails sent to each contact who joins a contact type or segment.',
});

const AutomationListItem = Type.Object(
  { ...automationFields, automation_schedule_count: Type.Integer({ description: 'How many emails it has.' }) },
  { description: 'An automation, with its number of emails.' },
);

/** One email of an automation, as the schedule list shows it. */
export const ScheduleShape = Type.Object(
  {
    id: Type.Integer(),
    user_id: Type.Integer(),
    automation_id: Type.Integer(),
    sender_id: Type.Integer(),
    from_sender: Type.String({ description: "The sender's `from_email`, copied when the email was added." }),
    reply_to: Type.String({ description: "The sender's `reply_to_email`, copied when the email was added." }),
    sender_name: Nullable(Type.String({ description: "The sender's `from_name`." })),
    sender_address: Nullable(Type.String({ description: "The sender's postal address on one line (the footer's)." })),
    subject: Type.String(),
    waiting_period: Type.Integer(),
    waiting_type: Type.String({ description: '`instantly`, `days` or `hours`.' }),
    utr: Type.String({ description: 'Unique UUID of the email (schedule delete names it by this).' }),
    template_id: Type.Integer(),
    preview_img: Type.String({ description: 'The preview image file name, as given.' }),
    template_json: Nullable(Type.String()),
    template_html: Nullable(Type.String()),
    track_clicks: Type.Integer({
      minimum: 0,
      maximum: 1,
      description: '1: its links are rewritten for click tracking; 0: left as they are.',
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
    design_url: Type.String({ description: 'The page showing the email as it will look: `{PUBLIC_URL}/designs/<utr>`.' }),
    image: Type.String({ description: 'The preview image: `{PUBLIC_URL}/images/templates/<preview_img>`.' }),
  },
  { description: 'One timed email of an automation.' },
);

export const AutomationList = ListOf('automations', AutomationListItem, "The account's automations, newest first.");
export const AutomationDetails = Success(Type.Object({ automation: AutomationShape }));
export const ScheduleList = Success(Type.Object({ automation_schedules: Type.Array(ScheduleShape) }), {
  description: 'The emails in the order they run (creation order).',
});
export const UtrAnswer = (description: string) => Success(Type.Object({ utr: Type.String() }), { description });
export const ScheduleAdded = Type.Object(
  {
    status: Type.Literal('success'),
    message: Type.String(),
    id: Type.Integer({ description: "The new email's id." }),
    utr: Type.String({ description: "The new email's utr." }),
  },
  { description: 'Added: `Schedule Added`.' },
);

/** The API shape of an automation (`live_at` as `YYYY-MM-DD HH:MM:SS`, the group id as text). */
export function toAutomation(row: AutomationRow) {
  return {
    id: row.id,
    user_id: row.user_id,
    automation_for: Number(row.automation_for),
    automation_for_table: row.automation_for_table,
    automation_name: row.automation_name,
    exit_criteria: Number(row.exit_criteria),
    unsubscribe_group_id: row.unsubscribe_group_id === null ? null : String(row.unsubscribe_group_id),
    automation_type: Number(row.automation_type),
    utr: row.utr,
    status: Number(row.status),
    live_at: row.live_at === null ? null : sqlDateTime(new Date(row.live_at)),
    total_triggered: Number(row.total_triggered),
    total_delivered: Number(row.total_delivered),
    total_unique_opens: Number(row.total_unique_opens),
    total_opens: Number(row.total_opens),
    total_bounces: Number(row.total_bounces),
    total_unsubscribe: Number(row.total_unsubscribe),
    deleted_at: row.deleted_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** The API shape of one email, with the addresses of its preview page and image. */
export function toSchedule(row: AutomationScheduleRow, config: Pick<Config, 'publicUrl'>) {
  return {
    id: row.id,
    user_id: row.user_id,
    automation_id: row.automation_id,
    sender_id: row.sender_id,
    from_sender: row.from_sender,
    reply_to: row.reply_to,
    sender_name: row.sender_name,
    sender_address: row.sender_address,
    subject: row.subject,
    waiting_period: Number(row.waiting_period),
    waiting_type: row.waiting_type,
    utr: row.utr,
    template_id: row.template_id,
    preview_img: row.preview_img,
    template_json: row.template_json,
    template_html: row.template_html,
    track_clicks: Number(row.track_clicks),
    created_at: row.created_at,
    updated_at: row.updated_at,
    design_url: `${config.publicUrl}/designs/${encodeURIComponent(row.utr)}`,
    image: previewImageUrl(config, row.preview_img),
  };
}

/** Set live refused: the automation lacks what going live needs (a text), or the `utr` is malformed (field messages). */
export const SetLiveRefused = Type.Object(
  { status: Type.Literal('failed'), errors: Type.Union([Type.String(), FieldMessages]) },
  {
    description:
      'Cannot go live: `Unsubscribe group require to live automation` (its group is gone) or `Add at least one email to live automation`; ' +
      'field messages for a malformed `utr`.',
  },
);
