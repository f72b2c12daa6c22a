/** The API's shapes the console reads (the OpenAPI document at /openapi.json has them all). */
export interface ContactType {
  id: number;
  name: string;
  contacts_count?: number;
}

export interface Contact {
  id: number;
  contact_type_id: number;
  first_name: string;
  last_name: string;
  email: string;
  alt_email: string | null;
  country: string;
  state: string | null;
  city: string | null;
  address_line1: string | null;
  address_line2: string | null;
  state_province_region: string | null;
  postal_code: string | null;
  custom_field: Record<string, { field_name: string; field_value: string | null }> | null;
  fullname: string;
  created_at: string;
  updated_at: string;
  contact_type?: ContactType | null;
}

export interface Country {
  id: number;
  name: string;
}

export interface Overview {
  days: number;
  since: string;
  single_sends: number;
  sent: number;
  delivered: number;
  unique_opens: number;
  unique_clicks: number;
  /** Messages a person opened (not only a machine); docs/engagement.md. */
  unique_human_opens: number;
  machine_opens: number;
  bot_clicks: number;
  open_rate: number;
  click_rate: number;
  bounces: number;
  complaints: number;
  unsubscribes: number;
  daily: Array<{ day: string; delivered: number; opens: number; clicks: number }>;
  in_progress: Array<{ utr: string; single_send_name: string; messages: number; done: number }>;
}

/** A sender identity, as `/senders` lists it. */
export interface Sender {
  id: number;
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
  is_verified: number;
  send_at: string | null;
  created_at: string;
}

/** An unsubscribe group, as `/unsubscribes-groups` lists it. */
export interface UnsubscribeGroup {
  id: number;
  group_name: string;
  description: string;
  is_display: number;
  unsubscribe_clients_count?: number;
  created_at: string;
}

/** A segment, as `/segment/list` lists it. */
export interface Segment {
  id: number;
  contact_type_id: number;
  segment_name: string;
  select_field: string[];
  select_operator: string[];
  value: string[];
  query_type: string | null;
  created_at: string;
  updated_at: string;
  segment_emails_count: number;
}

/** The figures of a single send's or an automation's report. */
export interface Stats {
  triggered: number;
  delivered: number;
  hard_bounces: number;
  soft_bounces: number;
  unique_opens: number;
  total_opens: number;
  unique_clicks: number;
  total_clicks: number;
  unsubscribes: number;
  spam_reports: number;
  /** Recipients a person opened for (not only a machine); docs/engagement.md. */
  unique_human_opens: number;
  machine_opens: number;
  bot_clicks: number;
  links: Array<{ url: string; unique_clicks: number; total_clicks: number }>;
}
