/** The API's shapes the Settings pages read (the OpenAPI document at /openapi.json has them all). */

/** An entry of the global unsubscribe list or a group's recipient. */
export interface Unsubscriber {
  id: number;
  unsubscribe_groups_id: number | null;
  email_address: string;
  created_at: string;
}

export interface Suppression {
  email: string;
  reason: 'hard_bounce' | 'soft_bounces' | 'complaint' | 'inactive';
  detail: string | null;
  created_at: string;
}

/** The account's sunset policy, as `/account/settings` shows it. */
export interface SunsetSettings {
  sunset_enabled: number;
  sunset_days: number;
  sunset_min_messages: number;
}

/** What the sunset policy would suppress now (`/account/sunset-preview`). */
export interface SunsetPreview {
  count: number;
  sample: string[];
}

export interface NotificationRecipient {
  id: number;
  email_address: string;
  email_owner: string;
  created_at: string;
}

export interface WebhookEndpoint {
  id: number;
  url: string;
  events: string[];
  description: string;
  enabled: number;
  failing_since: string | null;
  created_at: string;
}

export interface WebhookAttempt {
  event_id: string;
  event_type: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  created_at: string;
  next_attempt_at: string | null;
}

/** The events an endpoint can take (the API's `events` enum, `*` aside). */
export const EVENT_TYPES = [
  'message.delivered',
  'message.bounced',
  'message.opened',
  'message.clicked',
  'message.complained',
  'contact.unsubscribed',
  'contact.subscribed',
  'single_send.completed',
  'contacts.imported',
  'sender.verified',
  'automation.live',
  'automation.paused',
] as const;

/** An API time (`2026-11-25T12:00:00.000000Z` or `2026-11-25 12:00:00`) as short readable UTC text. */
export function when(value: string | null): string {
  if (!value) return '';
  return `${value.replace('T', ' ').slice(0, 16)} UTC`;
}
