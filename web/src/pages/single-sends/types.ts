/** The API shapes the single-send pages read (the OpenAPI document at /openapi.json has them all). */
import type { Stats as BaseStats } from '../../lib/types';
import { zonedToUtc } from './time';

export interface RecipientRef {
  id: string;
  table: 'contacts' | 'segments';
}

export interface SingleSend {
  id: number;
  utr: string;
  single_send_name: string;
  template_id: number;
  template_json: string | null;
  template_html: string | null;
  recipient_id: RecipientRef[];
  exclude_specific_recipient_id: RecipientRef[];
  sender_id: number;
  unsubscribe_group_id: number;
  from_sender: string;
  sender_name: string | null;
  subject: string;
  preheader: string;
  schedule_type: number;
  schedule_date: string;
  schedule_time: string;
  timezone: string | null;
  /** 0 draft, 1 ready (or scheduled), 2 sending, 3 sent. */
  status: number;
  triggered: number;
  delivered: number;
  unique_opens: number;
  total_opens: number;
  unique_clicks: number;
  total_clicks: number;
  bounces: number;
  unsubscribes: number;
  sent_at: string | null;
  created_at: string;
}

/** A send's figures, with its hourly timeline. */
export interface Stats extends BaseStats {
  timeline: Array<{ hour: string; delivered: number; opens: number; clicks: number }>;
}

/** A send's status in words. */
export function statusWord(send: Pick<SingleSend, 'status' | 'schedule_type'>): string {
  switch (send.status) {
    case 0:
      return 'Draft';
    case 1:
      return send.schedule_type === 1 ? 'Scheduled' : 'Ready';
    case 2:
      return 'Sending';
    default:
      return 'Sent';
  }
}

/** When a send is scheduled, as the person gave it (`2030-03-01 08:00 Europe/Berlin`), or '' for an immediate one. */
export function scheduleText(send: Pick<SingleSend, 'schedule_type' | 'schedule_date' | 'schedule_time' | 'timezone'>): string {
  if (send.schedule_type !== 1) return '';
  return `${send.schedule_date} ${send.schedule_time.slice(0, 5)} ${send.timezone ?? 'UTC'}`;
}

/**
 * Whether a send may still be edited: a draft, or a send scheduled for a time still to come. A
 * send queued to go at once, or whose time has come, is about to start (or started): editing it
 * would race the sending, so the console offers its report instead.
 */
export function isEditable(
  send: Pick<SingleSend, 'status' | 'schedule_type' | 'schedule_date' | 'schedule_time' | 'timezone'>,
  now = Date.now(),
): boolean {
  if (send.status === 0) return true;
  if (send.status !== 1 || send.schedule_type !== 1) return false;
  try {
    return zonedToUtc(send.schedule_date, send.schedule_time.slice(0, 8), send.timezone ?? 'UTC').getTime() > now;
  } catch {
    return false;
  }
}

/** The contact whose data fills a test or a preview (`contact` of `GET /single-send/preview`). */
export interface FillContact {
  id: number;
  email: string;
  first_name: string | null;
  last_name: string | null;
}

/** `GET /single-send/preview`: the send's mail as one contact would get it. */
export interface Preview {
  subject: string;
  preheader: string;
  html: string;
  text: string;
  contact: FillContact | null;
}

/** `GET /single-send/check`: the design's links, the recipient count and the warnings before sending. */
export interface SendCheck {
  links: Array<{ url: string; text: string; kind: 'web' | 'mailto' | 'tel' | 'placeholder' | 'anchor' | 'empty' | 'other' }>;
  recipients: number;
  warnings: Array<{ type: string; message: string; url?: string; text?: string }>;
}

/** A link kind that goes nowhere for the mail's reader (the check warns about each). */
export const deadLink = (kind: SendCheck['links'][number]['kind']) => kind === 'anchor' || kind === 'empty' || kind === 'other';

/** A contact as the composer names it: `Ada Lovelace <ada@example.com>`, or the address alone. */
export function contactLabel(c: Pick<FillContact, 'email' | 'first_name' | 'last_name'>): string {
  const name = [c.first_name, c.last_name]
    .map((s) => (s ?? '').trim())
    .filter(Boolean)
    .join(' ');
  return name ? `${name} <${c.email}>` : c.email;
}
