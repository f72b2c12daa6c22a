/** The API's shapes the automation pages read (the OpenAPI document at /openapi.json has them all). */
export interface Automation {
  id: number;
  automation_for: number;
  automation_for_table: string;
  automation_name: string;
  exit_criteria: number;
  unsubscribe_group_id: string | null;
  automation_type: number;
  utr: string;
  /** 0 draft (paused when `live_at` is set), 1 live. */
  status: number;
  live_at: string | null;
  total_triggered: number;
  total_delivered: number;
  total_unique_opens: number;
  total_opens: number;
  total_bounces: number;
  total_unsubscribe: number;
  created_at: string;
  updated_at: string;
  automation_schedule_count?: number;
}

export interface Schedule {
  id: number;
  sender_id: number;
  from_sender: string;
  sender_name: string | null;
  subject: string;
  waiting_period: number;
  waiting_type: 'instantly' | 'hours' | 'days';
  utr: string;
  template_id: number;
  template_json: string | null;
  template_html: string | null;
  design_url: string;
}

/** A target the automation can run for: `contacts_<id>` or `segments_<id>`, with its name. */
export interface Target {
  key: string;
  label: string;
  kind: 'contacts' | 'segments';
}

/** The values of the create and edit forms. */
export interface AutomationForm {
  automation_name: string;
  /** Empty until chosen (create). */
  type: 'welcome' | 'custom' | '';
  automation_for: string;
  unsubscribe_group_id: string;
  exit_criteria: boolean;
}
