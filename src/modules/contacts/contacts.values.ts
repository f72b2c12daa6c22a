import type { FieldType } from '../fields/fields.reserved.js';
import { RESERVED_EXTRAS, fieldLabel } from '../fields/fields.reserved.js';

/** `YYYY-MM-DDTHH:MM` with optional seconds: the datetime-local form (contract §6). */
export const DATETIME_LOCAL = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2})?$';
const DATETIME_LOCAL_RE = new RegExp(DATETIME_LOCAL);
const NUMBER_RE = /^-?\d+(\.\d+)?$/;

/** Whether a text value fits a field type. */
export function fitsFieldType(type: FieldType | string, value: string): boolean {
  if (type === 'number') return NUMBER_RE.test(value);
  if (type === 'datetime-local') return DATETIME_LOCAL_RE.test(value) && !Number.isNaN(Date.parse(value + 'Z'));
  return true;
}

/** The message for a value that does not fit its field type. */
export function fieldTypeMessage(type: FieldType | string, label: string): string {
  return type === 'number' ? `The ${label} must be a number.` : `The ${label} is not a valid date.`;
}

export type CustomValues = Record<string, string>;

/** Stored `custom_field` text → values object. */
export function parseCustomValues(text: string | null): CustomValues {
  if (!text) return {};
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' ? (v as CustomValues) : {};
  } catch {
    return {};
  }
}

/** Values object → stored text (null when empty). */
export function serializeCustomValues(values: CustomValues): string | null {
  return Object.keys(values).length ? JSON.stringify(values) : null;
}

/** Stored values → the API's `custom_field` object (`{name: {field_name, field_value}}`) or null. */
export function toCustomFieldObject(text: string | null): Record<string, { field_name: string; field_value: string | null }> | null {
  const values = parseCustomValues(text);
  const keys = Object.keys(values);
  if (keys.length === 0) return null;
  const out: Record<string, { field_name: string; field_value: string | null }> = {};
  for (const k of keys) out[k] = { field_name: fieldLabel(k), field_value: values[k] ?? null };
  return out;
}

export const EXTRA_NAMES = RESERVED_EXTRAS.map((f) => f.name);
