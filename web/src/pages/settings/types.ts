/** The records the Settings pages read: pieces of the service's answers (see lib/types.ts). */
import type { Body, Message } from '../../lib/api';

/** An entry of the global unsubscribe list or a group's recipient. */
export type Unsubscriber = Message<'/global-unsubscribes'>['unSubscribers'][number];

export type Suppression = Message<'/suppressions'>['suppressions'][number];

/** The account's sunset policy, as `/account/settings` shows it. */
export type SunsetSettings = Message<'/account/settings'>['settings'];

/** What the sunset policy would suppress now (`/account/sunset-preview`). */
export type SunsetPreview = Message<'/account/sunset-preview'>;

export type NotificationRecipient = Message<'/notification-recipients'>['notifications'][number];

export type SendingDomain = Message<'/sending-domains'>['domains'][number];

export type WebhookEndpoint = Message<'/webhooks/endpoints'>['endpoints'][number];

export type WebhookAttempt = Message<'/webhooks/deliveries'>['deliveries'][number];

/** An event an endpoint can take, as the service lists them (`*`, all of them, aside). */
type WebhookEvent = Exclude<NonNullable<Body<'/webhooks/endpoints/create'>['events']>[number], '*'>;

/** The events an endpoint can take, in the order the form offers them. */
export const EVENT_TYPES = [
  'message.delivered',
  'message.bounced',
  'message.opened',
  'message.clicked',
  'message.complained',
  'contact.unsubscribed',
  'contact.subscribed',
  'single_send.completed',
  'single_send.ab_winner',
  'contacts.imported',
  'sender.verified',
  'automation.live',
  'automation.paused',
  'sending_domain.failed',
  'sending_domain.verified',
] as const satisfies readonly WebhookEvent[];

/** The service's events missing above: none, or the type check fails here (the form would not offer one). */
type Unlisted = Exclude<WebhookEvent, (typeof EVENT_TYPES)[number]>;
export const EVERY_EVENT_LISTED: [Unlisted] extends [never] ? true : Unlisted = true;
