/** The API shapes the Segments section reads (see /openapi.json). */

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
