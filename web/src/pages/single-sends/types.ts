/** The API shapes the single-send pages read (the OpenAPI document at /openapi.json has them all). */
import type { Stats as BaseStats } from '../../lib/types';

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
