/** The API shapes the Segments section reads (see /openapi.json). */
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

/** A member: a matched contact (`contact_id` set) or a recipient added by hand. */
export interface Recipient {
  id: number;
  segment_id: number;
  contact_id: number | null;
  first_name: string;
  last_name: string;
  email: string;
  fullname: string;
  created_at: string;
}

/** A reserved or custom field, as `/reserve-fields` and `/custom-fields` list them. */
export interface FieldDef {
  id: number;
  field_name: string;
  field_type: string;
  is_reserved: number;
}
