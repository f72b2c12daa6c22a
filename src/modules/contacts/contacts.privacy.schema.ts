import { Type } from '@sinclair/typebox';
import { Email, Enum, Nullable, Success } from '../../http/schemas.js';
import { sqlDateTime } from '../../util/time.js';
import { SuppressionShape } from '../suppressions/suppressions.schema.js';
import { ContactShape } from './contacts.schema.js';

/** `?email=`: the address whose data is exported or erased, matched in any letter case. */
export const AddressQuery = Type.Object({ email: { ...Email, description: 'The address, matched in any letter case.' } });

/** Where a message stands, as the export shows it. */
export type ExportedState = 'queued' | 'delivered' | 'bounced' | 'failed';

const MessageShape = Type.Object({
  source: Enum(['single_send', 'automation'] as const),
  utr: Type.String({ description: "The single send's utr, or the automation's." }),
  subject: Type.String({ description: "The single send's or automation email's subject, placeholders unfilled." }),
  state: Enum(['queued', 'delivered', 'bounced', 'failed'] as const),
  sent_at: Nullable(Type.String({ description: 'UTC, `YYYY-MM-DD HH:MM:SS`; null until sent.' })),
  opens: Type.Integer({ minimum: 0 }),
  clicks: Type.Integer({ minimum: 0 }),
});

const ConsentShape = Type.Object({
  contact_id: Type.Integer(),
  form_id: Type.Integer({ description: 'The sign-up form (it may have been deleted since).' }),
  form_name: Type.String({ description: "The form's name at the time." }),
  signed_up_at: Type.String({ description: 'When the form was posted (ISO 8601, UTC).' }),
  signup_ip: Type.String(),
  signup_user_agent: Nullable(Type.String()),
  confirmed_at: Type.String({ description: 'When the link in the confirmation mail was confirmed (ISO 8601, UTC).' }),
  confirm_ip: Type.String(),
  confirm_user_agent: Nullable(Type.String()),
  mail_subject: Type.String({ description: 'The confirmation mail as sent (its link left out).' }),
  mail_text: Type.String(),
});

/** The answer of `GET /contacts/export`. */
export const ContactExport = Success(
  Type.Object({
    contacts: Type.Array(ContactShape, {
      description: 'Every contact record with the address, as details shows it; deleted ones too (with `deleted_at`).',
    }),
    segments: Type.Array(Type.Integer(), { description: 'Ids of the live segments the address is in (matched or added by hand).' }),
    unsubscribes: Type.Object({
      global: Type.Boolean(),
      groups: Type.Array(Type.Integer(), { description: 'Ids of the unsubscribe groups the address left (deleted groups too).' }),
    }),
    suppression: Nullable(SuppressionShape),
    messages: Type.Array(MessageShape, { description: 'Campaign mail to the address (single sends and automations), oldest first.' }),
    consents: Type.Array(ConsentShape, { description: 'The proof of each sign-up the address confirmed through a form, oldest first.' }),
  }),
  'Everything the account holds about the address.',
);

/** A queue row of campaign mail, as read for the export. */
export interface ExportedMessageRow {
  state: string;
  sent_at: string | null;
  opens: number;
  clicks: number;
  send_utr: string | null;
  send_subject: string | null;
  automation_utr: string | null;
  email_subject: string | null;
}

/** The export's state of a queue state: not yet gone, delivered, bounced, or never going (suppressed, cancelled). */
export function exportedState(state: string): ExportedState {
  if (state === 'sent') return 'delivered';
  if (state === 'bounced') return 'bounced';
  if (state === 'suppressed' || state === 'cancelled') return 'failed';
  return 'queued';
}

/** The API shape of a message of the export. */
export function toExportedMessage(row: ExportedMessageRow) {
  const send = row.send_utr !== null;
  return {
    source: send ? ('single_send' as const) : ('automation' as const),
    utr: (send ? row.send_utr : row.automation_utr) ?? '',
    subject: (send ? row.send_subject : row.email_subject) ?? '',
    state: exportedState(row.state),
    sent_at: row.sent_at ? sqlDateTime(new Date(row.sent_at)) : null,
    opens: Number(row.opens),
    clicks: Number(row.clicks),
  };
}
