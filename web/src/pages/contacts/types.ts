/** The shapes the Contacts pages read, beyond lib/types.ts. */

/** A reserved or custom field (`/reserve-fields`, `/custom-fields`). */
export interface FieldDefinition {
  id: number;
  user_id: number | null;
  field_name: string;
  field_type: 'text' | 'number' | 'datetime-local';
  is_reserved: number;
}

/** What `POST /contacts/upload-csv` answers besides `message`. */
export interface ImportSummary {
  created: number;
  updated: number;
  skipped: number;
  errors: Array<{ row: number; field: string; message: string }>;
}

export interface ExportedMessage {
  source: 'single_send' | 'automation';
  utr: string;
  subject: string;
  state: 'queued' | 'delivered' | 'bounced' | 'failed';
  sent_at: string | null;
  opens: number;
  clicks: number;
}

/** `GET /contacts/export`: everything the account holds about an address. */
export interface ContactExport {
  contacts: unknown[];
  segments: number[];
  unsubscribes: { global: boolean; groups: number[] };
  suppression: { email: string; reason: 'hard_bounce' | 'soft_bounces' | 'complaint'; detail: string | null; created_at: string } | null;
  messages: ExportedMessage[];
  consents?: unknown[];
}

export interface SegmentSummary {
  id: number;
  segment_name: string;
}

export interface UnsubscribeGroupSummary {
  id: number;
  group_name: string;
}
