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
  open_rate: number;
  click_rate: number;
  bounces: number;
  complaints: number;
  unsubscribes: number;
  daily: Array<{ day: string; delivered: number; opens: number; clicks: number }>;
  in_progress: Array<{ utr: string; single_send_name: string; messages: number; done: number }>;
}
