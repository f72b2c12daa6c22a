import type { Generated } from 'kysely';

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

export interface DB {
  accounts: AccountTable;
  fields: FieldTable;
  contact_types: ContactTypeTable;
  contacts: ContactTable;
}
