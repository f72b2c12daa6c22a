import type { Generated, Selectable } from 'kysely';

/** Table rows as stored. Timestamps are text (ISO-8601 UTC with microseconds) on both engines. */
export interface AccountTable {
  id: Generated<number>;
  name: string;
  public_key: string;
  secret_hash: string;
  disabled: Generated<number>;
  created_at: string;
  updated_at: string;
}

/** An account's API key; the secret only as its hash. */
export interface ApiKeyTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  public_key: string;
  secret_hash: string;
  /** `full`, or a JSON array of scopes. */
  scopes: string;
  created_by_type: string | null;
  created_by_id: number | null;
  created_by_name: string | null;
  /** The person at the start of the key's chain of makers; null when it starts at the command line. */
  root_person_id: number | null;
  last_used_at: string | null;
  created_at: string;
  updated_at: string;
}

/** One entry of an account's audit log. */
export interface AuditLogTable {
  id: Generated<number>;
  user_id: number;
  actor_type: string;
  actor_id: number;
  actor_name: string;
  action: string;
  target: string | null;
  status: number;
  ip: string | null;
  user_agent: string | null;
  created_at: string;
}

/** A person of an account; `password_hash` is null until the invitation is accepted. */
export interface PersonTable {
  id: Generated<number>;
  user_id: number;
  email: string;
  email_key: string;
  name: string | null;
  role: string;
  password_hash: string | null;
  /** Sealed with the app secret. */
  two_factor_secret: string | null;
  two_factor_pending: string | null;
  two_factor_step: Generated<number>;
  last_sign_in_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A signed-in person's session; the cookie's secret only as its hash. */
export interface SessionTable {
  id: Generated<number>;
  user_id: number;
  person_id: number;
  secret_hash: string;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
}

/** An invitation or password reset link; its secret only as its hash. */
export interface AccessTokenTable {
  id: Generated<number>;
  user_id: number;
  person_id: number;
  purpose: string;
  secret_hash: string;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

export interface SignInFailureTable {
  id: Generated<number>;
  email_key: string;
  /** The client address the failure came from (null: written before addresses were kept). */
  ip: string | null;
  created_at: string;
}

export interface RecoveryCodeTable {
  id: Generated<number>;
  person_id: number;
  code_hash: string;
  used_at: string | null;
}

export interface FieldTable {
  id: Generated<number>;
  user_id: number | null;
  field_name: string;
  field_type: string;
  is_reserved: number;
  created_at: string | null;
  updated_at: string | null;
}

export interface ContactTypeTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  /** Lower-cased name: the key of the per-account uniqueness rule. */
  name_key: string;
  /** Live contacts of the type, kept by triggers (migration 008). */
  contacts_count: Generated<number>;
  deleted_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface ContactTable {
  id: Generated<number>;
  user_id: number;
  contact_type_id: number;
  first_name: string;
  last_name: string;
  email: string;
  /** Lower-cased email: the key of the per (account, contact type) uniqueness rule. */
  email_key: string;
  alt_email: string | null;
  country: string;
  state: string | null;
  city: string | null;
  address_line1: string | null;
  address_line2: string | null;
  state_province_region: string | null;
  postal_code: string | null;
  /** JSON text: field name → value (string), or null when the contact has none. */
  custom_field: string | null;
  deleted_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface UnsubscribeGroupTable {
  id: Generated<number>;
  user_id: number;
  /** Random numeric text, unique across accounts. */
  rand_id: string;
  group_name: string;
  description: string;
  is_display: number;
  /** Set when the group is deleted: hidden everywhere, its recipients still suppress. */
  deleted_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface UnsubscriberTable {
  id: Generated<number>;
  user_id: number;
  /** Null for a global unsubscribe. */
  unsubscribe_groups_id: number | null;
  email_address: string;
  /** Lower-cased address: the key of the per (account, group) uniqueness rule. */
  email_key: string;
  created_at: string;
  updated_at: string;
}

export interface SenderTable {
  id: Generated<number>;
  user_id: number;
  from_name: string;
  from_email: string;
  reply_to_email: string;
  country_id: number;
  state_id: number | null;
  city_id: number | null;
  zip_code: string | null;
  company_address: string;
  company_address2: string | null;
  nickname: string;
  is_verified: Generated<number>;
  /** Public unique sender token (not the verification secret). */
  utr: string;
  /** When the last verification mail was sent, `YYYY-MM-DD HH:MM:SS` UTC. */
  send_at: string | null;
  deleted_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface NotificationRecipientTable {
  id: Generated<number>;
  user_id: number;
  email_address: string;
  /** Lower-cased email_address: the key of the per-account uniqueness rule. */
  email_key: string;
  email_owner: string;
  created_at: string;
  updated_at: string;
}

/** A segment; the three condition arrays are JSON text arrays of strings. */
export interface SegmentTable {
  id: Generated<number>;
  user_id: number;
  contact_type_id: number;
  segment_name: string;
  select_field: string;
  select_operator: string;
  value: string;
  query_type: string | null;
  deleted_at: string | null;
  created_at: string;
  updated_at: string;
  /** When the membership of a segment with engagement conditions was last recomputed (null: never since it was saved). */
  refreshed_at: Generated<string | null>;
}

/** A segment member: a matched contact (contact_id set) or a recipient added by hand (contact_id null). */
export interface SegmentRecipientTable {
  id: Generated<number>;
  user_id: number;
  segment_id: number;
  contact_id: number | null;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  /** Lower-cased email of a hand-added recipient (null for matched contacts). */
  email_key: string | null;
  created_at: string;
  updated_at: string;
}

/** A matched contact removed by hand from a segment (until the segment is edited). */
export interface SegmentExclusionTable {
  segment_id: number;
  contact_id: number;
}

export interface SingleSendTable {
  id: Generated<number>;
  user_id: number;
  utr: string;
  template_id: number;
  template_json: string | null;
  template_html: string | null;
  /** JSON text: `[{"id":"5","table":"contacts"}, …]`. */
  recipient_id: string;
  /** JSON text, `[]` when none. */
  exclude_specific_recipient_id: Generated<string>;
  sender_id: number;
  unsubscribe_group_id: number;
  single_send_name: string;
  from_sender: string;
  reply_to: string;
  sender_name: string | null;
  sender_address: string | null;
  subject: string;
  preheader: string;
  schedule_type: number;
  schedule_date: string;
  schedule_time: string;
  timezone: string | null;
  /** UTC (`isoMicros`) when the send may start; null for a draft. */
  due_at: string | null;
  /** 0 initiate, 1 ready to send, 2 running, 3 completed. */
  status: Generated<number>;
  triggered: Generated<number>;
  delivered: Generated<number>;
  unique_opens: Generated<number>;
  total_opens: Generated<number>;
  bounces: Generated<number>;
  unsubscribes: Generated<number>;
  hard_bounces: Generated<number>;
  soft_bounces: Generated<number>;
  spam_reports: Generated<number>;
  unique_clicks: Generated<number>;
  total_clicks: Generated<number>;
  /** Opens that were machines' (they count in `total_opens` too); see docs/engagement.md. */
  machine_opens: Generated<number>;
  /** Recipients with at least one open that is not a machine's (a person's click counts as one). */
  unique_human_opens: Generated<number>;
  /** Clicks that were scanners' (they count in no other click figure). */
  bot_clicks: Generated<number>;
  /** 1: the links of its design are rewritten for click tracking. */
  track_clicks: Generated<number>;
  /** 1: an A/B test (see migration 028 and docs/ab-tests.md); the other `ab_` columns are null otherwise. */
  ab_test: Generated<number>;
  /** The share of recipients in the test, 10–50 (percent). */
  ab_test_percent: number | null;
  /** `opens` or `clicks`: what decides the winner (people's only). */
  ab_winner_metric: string | null;
  ab_wait_minutes: number | null;
  /** UTC (`isoMicros`) when the wait ends: set once the test share was handed to the SMTP server. */
  ab_wait_ends_at: string | null;
  /** The winning variant's index, once chosen (never changes after). */
  ab_winner: number | null;
  ab_winner_at: string | null;
  sent_at: string | null;
  deleted_at: string | null;
  created_at: string;
  updated_at: string;
}

/** Variant 1–4 of an A/B test (variant 0 is the send itself); see migration 028. */
export interface SingleSendVariantTable {
  id: Generated<number>;
  user_id: number;
  single_send_id: number;
  /** Its index, 1–4. */
  variant: number;
  subject: string;
  /** Its own design; all three null: the send's design. */
  template_id: number | null;
  template_json: string | null;
  template_html: string | null;
  /** The saved design its `template_json` was copied from, if any. */
  design_id: number | null;
  /** The send's, copied: the placeholders of its tracked links read them. */
  sender_name: string | null;
  sender_address: string | null;
}

/** Where a queued message stands. */
export type MailState = 'queued' | 'sending' | 'sent' | 'bounced' | 'suppressed' | 'cancelled' | 'held';

/** One outgoing message: the durable mail queue (see migration 009). */
export interface MailMessageTable {
  id: Generated<number>;
  user_id: number;
  /** The kind of mail it is (the name of one of the kinds the queue is given): it decides how it is rendered and counted. */
  kind: string;
  single_send_id: number | null;
  automation_id: number | null;
  /** The automation email this message is (automation messages only). */
  automation_schedule_id: number | null;
  contact_id: number | null;
  email: string;
  email_key: string;
  /** JSON text: the whole message for `system` mails; extra values for others (or null). */
  payload: string | null;
  state: Generated<MailState>;
  attempts: Generated<number>;
  /** Due time; while `sending`, the end of the lease. */
  next_attempt_at: string;
  lease_owner: string | null;
  last_error: string | null;
  message_id: string | null;
  sent_at: string | null;
  opens: Generated<number>;
  first_opened_at: string | null;
  unsubscribed: Generated<number>;
  /** `hard` or `soft` once it bounced (at the SMTP answer or reported later); null otherwise. */
  bounce_type: string | null;
  /** 1 once its recipient reported it as spam. */
  complained: Generated<number>;
  clicks: Generated<number>;
  first_clicked_at: string | null;
  /** Opens of this message that were machines' (docs/engagement.md); they count in `opens` too. */
  machine_opens: Generated<number>;
  /** Clicks of this message that were a scanner's; they count in no click figure but `bot_clicks`. */
  bot_clicks: Generated<number>;
  /** When a person last opened it (a machine open never sets it); null: no person did. */
  last_human_opened_at: string | null;
  /** When a person last clicked one of its links (a scanner's click never sets it); null: no person did. */
  last_human_clicked_at: string | null;
  /** When a person last opened its image (a pixel open that is not a machine's); null: never. */
  human_pixel_opened_at: string | null;
  /** The name of the relay that accepted it (null: the outbox, or a single SMTP server). */
  relay: string | null;
  /** 1 when its address's suppression was lifted after it was delivered: the sunset policy no longer counts it. */
  sunset_lifted: Generated<number>;
  /** The A/B test variant of a message of the test share; null otherwise (the winner's send carries the send's `ab_winner`). */
  ab_variant: number | null;
  created_at: string;
  updated_at: string;
}

/** A row of the mail queue, as read. */
export type QueuedMessage = Selectable<MailMessageTable>;

/**
 * Why an address is suppressed: a hard bounce, 3 soft bounces within 30 days, a spam complaint, or
 * no person's engagement for long under the account's sunset policy (`inactive`)
 * (`suppressions.reason`, as the API shows it). Written and read by src/suppression/ only.
 */
export type SuppressionReason = 'hard_bounce' | 'soft_bounces' | 'complaint' | 'inactive';

/** An account's settings (see migration 025); an account without a row has the defaults. */
export interface AccountSettingsTable {
  user_id: number;
  /** 1: the sunset policy is on. */
  sunset_enabled: Generated<number>;
  /** How long without a person's open or click (30–1095 days). */
  sunset_days: Generated<number>;
  /** How many messages the address must have received (1–100). */
  sunset_min_messages: Generated<number>;
  /** When the account's inactive addresses were last brought up to date (null: never). */
  sunset_swept_at: string | null;
  /** 1: people without two-factor authentication are kept out. */
  require_two_factor: Generated<number>;
  created_at: string;
  updated_at: string;
}

/** A suppressed address of the account: never mailed again by the account (until lifted). */
export interface SuppressionTable {
  id: Generated<number>;
  user_id: number;
  /** The address in lower case: what every check compares. */
  email_key: string;
  /** The address as reported. */
  email: string;
  reason: SuppressionReason;
  /** The server's answer or the report's text that caused it. */
  detail: string | null;
  created_at: string;
}

/** One soft bounce of an address (of a message, or reported without one): the threshold counts them. */
export interface SoftBounceTable {
  id: Generated<number>;
  user_id: number;
  email_key: string;
  mail_message_id: number | null;
  bounced_at: string;
}

/** The key of an inbound event taken in: the same event twice counts once. */
export interface InboundEventTable {
  event_key: string;
  created_at: string;
}

export interface AutomationTable {
  id: Generated<number>;
  user_id: number;
  utr: string;
  automation_name: string;
  /** 1 welcome, 2 custom. */
  automation_type: number;
  automation_for: number;
  /** `contacts` (a contact type) or `segments`. */
  automation_for_table: string;
  /** 0 run every email; 1 also leave when the contact leaves the target. */
  exit_criteria: Generated<number>;
  unsubscribe_group_id: number | null;
  /** 0 draft (or paused, when `live_at` is set), 1 live. */
  status: Generated<number>;
  /** When it first went live (isoMicros; the API shows `YYYY-MM-DD HH:MM:SS`): a welcome automation enrols who joins after. */
  live_at: string | null;
  total_triggered: Generated<number>;
  total_delivered: Generated<number>;
  total_unique_opens: Generated<number>;
  total_opens: Generated<number>;
  total_bounces: Generated<number>;
  total_unsubscribe: Generated<number>;
  total_hard_bounces: Generated<number>;
  total_soft_bounces: Generated<number>;
  total_spam_reports: Generated<number>;
  total_unique_clicks: Generated<number>;
  total_clicks: Generated<number>;
  /** As a single send's `machine_opens`, `unique_human_opens` and `bot_clicks`, over all its emails. */
  total_machine_opens: Generated<number>;
  total_unique_human_opens: Generated<number>;
  total_bot_clicks: Generated<number>;
  deleted_at: string | null;
  created_at: string;
  updated_at: string;
}

/** One timed email of an automation. */
export interface AutomationScheduleTable {
  id: Generated<number>;
  user_id: number;
  automation_id: number;
  utr: string;
  sender_id: number;
  from_sender: string;
  reply_to: string;
  sender_name: string | null;
  sender_address: string | null;
  subject: string;
  waiting_period: number;
  /** `instantly`, `hours` or `days`. */
  waiting_type: string;
  template_id: number;
  preview_img: string;
  template_json: string | null;
  template_html: string | null;
  /** 1: the links of its design are rewritten for click tracking. */
  track_clicks: Generated<number>;
  created_at: string;
  updated_at: string;
}

/** Where an address stands in an automation (see migration 010). */
export interface AutomationEnrollmentTable {
  id: Generated<number>;
  user_id: number;
  automation_id: number;
  contact_id: number | null;
  email: string;
  email_key: string;
  /** JSON text: the names of a hand-added segment recipient; null for contacts. */
  payload: string | null;
  /** `active` or `exited`. */
  state: Generated<string>;
  exit_reason: string | null;
  last_schedule_id: number | null;
  next_schedule_id: number | null;
  step_base_at: string;
  due_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A link of a campaign's design rewritten for click tracking (see migration 014). */
export interface TrackedLinkTable {
  id: Generated<number>;
  user_id: number;
  /** Where the campaign's statistics are counted: its kind's source table and row. */
  source_table: string;
  source_id: number;
  /** The campaign whose design holds the link: `single_sends`, `single_send_variants` (an A/B test's variant with its own design) or `automation_schedules`, and its row. */
  campaign_table: string;
  campaign_id: number;
  /** 0-based order of first appearance in the design. */
  position: number;
  /** The href as in the design: entities decoded, `((placeholders))` kept (filled per recipient). */
  url: string;
  unique_clicks: Generated<number>;
  total_clicks: Generated<number>;
  created_at: string;
}

/** The first click of a message on a link: what makes a link's unique click unique. */
export interface LinkClickTable {
  message_id: number;
  link_id: number;
  first_clicked_at: string;
}

/** One click of a message (see migration 024): what the rules that find scanners' clicks read. */
export interface MessageClickTable {
  id: Generated<number>;
  message_id: number;
  /** The tracked link (`tracked_links.id`); 0: the message's trap link. */
  link_id: number;
  clicked_at: string;
  /** 1: a scanner's click (counted in `bot_clicks` only). */
  bot: Generated<number>;
  /** 1: this click counted the message's open (it came before any open). */
  opened: Generated<number>;
}

/** Delivered, opens and clicks of a source in one UTC hour (`YYYY-MM-DD HH:00:00`). */
export interface EngagementHourTable {
  source_table: string;
  source_id: number;
  hour: string;
  delivered: Generated<number>;
  opens: Generated<number>;
  clicks: Generated<number>;
}

/** The shared limiter state of one SMTP relay (see migration 012); times are epoch ms of the database's clock. */
export interface RelayTable {
  name: string;
  next_at: Generated<number>;
  paused_until: Generated<number>;
  pause_ms: Generated<number>;
}

/** A sending domain of an account (see migration 032): its DKIM key (the private one sealed) and last checks. */
export interface SendingDomainTable {
  id: Generated<number>;
  user_id: number;
  /** The A-label, lower case, no trailing dot. */
  domain: string;
  dkim_selector: string;
  /** Base64 of the DER SubjectPublicKeyInfo: the DKIM record's `p=`. */
  public_key: string;
  /** The PEM private key, sealed with the app secret. */
  private_key: string;
  status: Generated<string>;
  /** The last checks as JSON; null until the first. */
  checks: string | null;
  last_checked_at: string | null;
  created_at: string;
}

/** An account's webhook receiver (see migration 015). `events`: JSON array of event types, or `["*"]`. */
export interface WebhookEndpointTable {
  id: Generated<number>;
  user_id: number;
  url: string;
  events: string;
  description: Generated<string>;
  /** The signing secret, `whsec_` and base64 of its key. */
  secret: string;
  enabled: Generated<number>;
  /** Since when every attempt to it has failed; null while it answers. */
  failing_since: string | null;
  created_at: string;
  updated_at: string;
}

/** One outgoing event (the outbox): `body` is the exact JSON that is signed and posted. */
export interface WebhookEventTable {
  id: Generated<number>;
  user_id: number;
  /** The `webhook-id` of every attempt. */
  event_id: string;
  type: string;
  body: string;
  /** The address the event is about (lower case), or null. */
  email_key: string | null;
  created_at: string;
}

/** Where one event to one endpoint stands: a queue row like a mail message's. */
export type WebhookDeliveryState = 'pending' | 'sending' | 'delivered' | 'failed';

export interface WebhookDeliveryTable {
  id: Generated<number>;
  user_id: number;
  event_id: number;
  endpoint_id: number;
  state: Generated<WebhookDeliveryState>;
  attempts: Generated<number>;
  /** Due time; while `sending`, the end of the lease. */
  next_attempt_at: string;
  lease_owner: string | null;
  created_at: string;
  updated_at: string;
}

/** One attempt to deliver an event to an endpoint (the deliveries log). */
export interface WebhookAttemptTable {
  id: Generated<number>;
  delivery_id: number;
  endpoint_id: number;
  attempt: number;
  /** The receiver's HTTP status; null on a network error or timeout. */
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  created_at: string;
  /** When the next attempt runs; null when none will. */
  next_attempt_at: string | null;
}

/** An account's sign-up form (see migration 016). `fields`: JSON array of the field names it asks for. */
export interface SignupFormTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  contact_type_id: number;
  fields: string;
  unsubscribe_group_id: number | null;
  sender_id: number;
  redirect_url: string | null;
  confirmation_subject: string | null;
  confirmation_text: string | null;
  created_at: string;
  updated_at: string;
}

/** A sign-up waiting for its confirmation. `field_values`: JSON object of the values posted. */
export interface SignupPendingTable {
  id: Generated<number>;
  user_id: number;
  form_id: number;
  email: string;
  email_key: string;
  field_values: string;
  ip: string;
  user_agent: string | null;
  /** The confirmation mail as sent, the link's token left out. */
  mail_subject: string;
  mail_text: string;
  /** SHA-256 (hex) of the link's token. */
  token_hash: string;
  created_at: string;
  expires_at: string;
}

/** A sign-up counted by the forms' mail caps (see migration 021); kept a day. */
export interface SignupLogTable {
  id: Generated<number>;
  user_id: number;
  form_id: number;
  /** Keyed hash of the lower-case address without its `+tag`: the address itself is not kept. */
  address_hash: string;
  /** The address's domain, lower case. */
  domain: string;
  /** The client's IPv4 address, or its IPv6 /64 network. */
  client: string;
  created_at: string;
}

/** The proof of one confirmed sign-up, kept with the contact (deleted with it). */
export interface ContactConsentTable {
  id: Generated<number>;
  user_id: number;
  contact_id: number;
  email_key: string;
  /** The form's id (no reference: the proof outlives the form) and its name then. */
  form_id: number;
  form_name: string;
  signed_up_at: string;
  signup_ip: string;
  signup_user_agent: string | null;
  confirmed_at: string;
  confirm_ip: string;
  confirm_user_agent: string | null;
  mail_subject: string;
  mail_text: string;
  created_at: string;
}

/** An address the account erased, as a keyed hash (see migration 017): the queue never mails it for the account. */
export interface ErasedAddressTable {
  id: Generated<number>;
  user_id: number;
  /** Hex HMAC-SHA256 of the lower-case address (`erasureHash`). */
  hash: string;
  created_at: string;
}

/** A claimed `Idempotency-Key` of an account and, once answered, the answer kept (see migration 019). */
export interface IdempotencyKeyTable {
  id: Generated<number>;
  user_id: number;
  key: string;
  /** Fingerprint of method, URL and body; null while a streamed upload is still being read. */
  request_hash: string | null;
  state: 'running' | 'done';
  status: number | null;
  /** JSON object of the headers replayed with the body (content type). */
  headers: string | null;
  body: string | null;
  created_at: string;
  /** Past it a `running` row is abandoned and a `done` row expired: the next claim takes it over. */
  expires_at: string;
}

/** An account's saved design (see migration 020): its MJML JSON and the HTML compiled from it. */
export interface DesignTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  template_json: string;
  html_code: string;
  created_at: string;
  updated_at: string;
}

export interface TransactionalTemplateTable {
  id: Generated<number>;
  user_id: number;
  /** `d-` and 32 hexadecimal digits: the id the API shows. */
  public_id: string;
  name: string;
  created_at: string;
  updated_at: string;
}

export interface TransactionalTemplateVersionTable {
  id: Generated<number>;
  user_id: number;
  template_id: number;
  /** A UUID: the id the API shows. */
  public_id: string;
  name: string;
  subject: string;
  html_content: string;
  plain_content: string;
  generate_plain_content: number;
  /** `code` or `design` (SendGrid's editors; both are kept as given). */
  editor: string;
  /** Example `dynamic_template_data`, as JSON text, for previews. */
  test_data: string | null;
  /** 1 for the template's one active version. */
  active: number;
  created_at: string;
  updated_at: string;
}

/** An image of the media library (see migration 033): the cleaned image and its thumbnail, as bytes. */
export interface MediaTable {
  id: Generated<number>;
  user_id: number;
  /** The unguessable part of its public URLs. */
  token: string;
  filename: string;
  content_type: string;
  size: number;
  width: number;
  height: number;
  /** 1 for a still image; the number of frames of an animation. */
  frames: number;
  etag: string;
  data: Buffer;
  thumb_type: string;
  thumb_size: number;
  thumb: Buffer;
  created_at: string;
}

export interface DB {
  accounts: AccountTable;
  api_keys: ApiKeyTable;
  audit_log: AuditLogTable;
  people: PersonTable;
  sessions: SessionTable;
  access_tokens: AccessTokenTable;
  sign_in_failures: SignInFailureTable;
  recovery_codes: RecoveryCodeTable;
  account_settings: AccountSettingsTable;
  fields: FieldTable;
  contact_types: ContactTypeTable;
  contacts: ContactTable;
  senders: SenderTable;
  notification_recipients: NotificationRecipientTable;
  unsubscribe_groups: UnsubscribeGroupTable;
  unsubscribers: UnsubscriberTable;
  segments: SegmentTable;
  segment_recipients: SegmentRecipientTable;
  segment_exclusions: SegmentExclusionTable;
  single_sends: SingleSendTable;
  single_send_variants: SingleSendVariantTable;
  mail_messages: MailMessageTable;
  suppressions: SuppressionTable;
  soft_bounces: SoftBounceTable;
  inbound_events: InboundEventTable;
  automations: AutomationTable;
  automation_schedules: AutomationScheduleTable;
  automation_enrollments: AutomationEnrollmentTable;
  tracked_links: TrackedLinkTable;
  link_clicks: LinkClickTable;
  message_clicks: MessageClickTable;
  engagement_hours: EngagementHourTable;
  relays: RelayTable;
  sending_domains: SendingDomainTable;
  webhook_endpoints: WebhookEndpointTable;
  webhook_events: WebhookEventTable;
  webhook_deliveries: WebhookDeliveryTable;
  webhook_attempts: WebhookAttemptTable;
  signup_forms: SignupFormTable;
  signup_pending: SignupPendingTable;
  signup_log: SignupLogTable;
  contact_consents: ContactConsentTable;
  erased_addresses: ErasedAddressTable;
  idempotency_keys: IdempotencyKeyTable;
  designs: DesignTable;
  transactional_templates: TransactionalTemplateTable;
  transactional_template_versions: TransactionalTemplateVersionTable;
  media: MediaTable;
}
