import { cityById, countryById, stateById } from '../reference/geo.js';
import { CONTACT_COLUMNS } from '../reference/fields.js';

/** The placeholder names `GET /get-dynamic/content` lists, in the order clients expect them. */
export const PLACEHOLDER_NAMES = [
  'first_name',
  'last_name',
  'email',
  'alt_email',
  'country',
  'state',
  'city',
  'address_line1',
  'address_line2',
  'state_province_region',
  'postal_code',
  'full_name',
  'father_name',
  'designation',
  'age',
  'company_name',
  'birth_date',
  'join_date',
  'sender_name',
  'sender_address',
  'unsubscribe_preferences',
] as const;

/**
 * `((name))`, with optional spaces inside the parentheses (editors insert them). Names are
 * letters, digits and underscores (custom field names are the same), matched case-insensitively.
 */
export const TOKEN = /\(\(\s*([A-Za-z0-9_]+)\s*\)\)/g;

/** Placeholder name → value. Missing, null and empty all render as empty text. */
export type PlaceholderValues = Readonly<Record<string, string | number | null | undefined>>;

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const NEEDS_ESCAPE = /[&<>"']/;

/** Escapes text for HTML bodies and quoted attributes alike. */
export function escapeHtml(s: string): string {
  return NEEDS_ESCAPE.test(s) ? s.replace(/[&<>"']/g, (c) => ESCAPES[c]) : s;
}

/** What a recipient contributes: the contact's columns and its custom values (reserved extras included). */
export interface RecipientInput {
  first_name?: string | null;
  last_name?: string | null;
  email?: string | null;
  alt_email?: string | null;
  /** The country id as stored (text or number); rendered as the country's name. */
  country?: string | number | null;
  state?: string | null;
  city?: string | null;
  address_line1?: string | null;
  address_line2?: string | null;
  state_province_region?: string | null;
  postal_code?: string | null;
  /** Custom field name → value, as stored in the contact's `custom_field`. */
  custom?: Record<string, string | number | null | undefined> | null;
}

/** The contact's own columns, but `country`, which renders as a name. */
const TEXT_COLUMNS = CONTACT_COLUMNS.filter((c) => c !== 'country') as Array<Exclude<keyof RecipientInput, 'country' | 'custom'>>;

/** The country's name for a stored id; other text is kept as it is. */
function countryName(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  const text = String(value).trim();
  return /^\d+$/.test(text) ? (countryById(Number(text))?.name ?? '') : text;
}

/**
 * A recipient's placeholder values (lower-case keys): contact columns, custom values, `country` as
 * a name and `full_name` as first + last name. Columns win over custom values of the same name.
 */
export function recipientValues(r: RecipientInput): Record<string, string> {
  const out: Record<string, string> = {};
  if (r.custom) {
    for (const [k, v] of Object.entries(r.custom)) if (v !== null && v !== undefined) out[k.toLowerCase()] = String(v);
  }
  for (const k of TEXT_COLUMNS) out[k] = String(r[k] ?? '');
  out.country = countryName(r.country);
  out.full_name = [r.first_name, r.last_name]
    .map((s) => (s ?? '').trim())
    .filter(Boolean)
    .join(' ');
  return out;
}

/** The sender's fields that make its name and postal address (a row of `senders`). */
export interface SenderInput {
  from_name?: string | null;
  company_address?: string | null;
  company_address2?: string | null;
  city_id?: number | null;
  state_id?: number | null;
  zip_code?: string | null;
  country_id?: number | null;
}

/**
 * The sender's postal address on one line, the value of `((sender_address))`: company address
 * (and its second line), city, "state zip", country; empty parts left out, names from the geo
 * lookup.
 */
export function senderAddress(s: SenderInput): string {
  const city = s.city_id ? cityById(s.city_id)?.name : undefined;
  const state = s.state_id ? stateById(s.state_id)?.name : undefined;
  const country = s.country_id ? countryById(s.country_id)?.name : undefined;
  const stateZip = [state, s.zip_code?.trim()].filter(Boolean).join(' ');
  return [s.company_address?.trim(), s.company_address2?.trim(), city, stateZip, country].filter(Boolean).join(', ');
}

/** `sender_name` and `sender_address`: the same for every recipient of a mailing, so computed once. */
export function senderValues(s: SenderInput): Record<string, string> {
  return { sender_name: (s.from_name ?? '').trim(), sender_address: senderAddress(s) };
}
