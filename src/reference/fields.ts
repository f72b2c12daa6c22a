/** Reserved fields: the contact's own columns, then the six kept in `custom_field`. */
export const RESERVED_FIELDS = [
  { name: 'first_name', type: 'text' },
  { name: 'last_name', type: 'text' },
  { name: 'email', type: 'text' },
  { name: 'alt_email', type: 'text' },
  { name: 'country', type: 'text' },
  { name: 'state', type: 'text' },
  { name: 'city', type: 'text' },
  { name: 'address_line1', type: 'text' },
  { name: 'address_line2', type: 'text' },
  { name: 'state_province_region', type: 'text' },
  { name: 'postal_code', type: 'text' },
  { name: 'father_name', type: 'text' },
  { name: 'designation', type: 'text' },
  { name: 'company_name', type: 'text' },
  { name: 'age', type: 'number' },
  { name: 'birth_date', type: 'datetime-local' },
  { name: 'join_date', type: 'datetime-local' },
] as const;

export type FieldType = 'text' | 'number' | 'datetime-local';
export const FIELD_TYPES: readonly FieldType[] = ['text', 'number', 'datetime-local'];

/** Contact columns of their own (the first eleven reserved fields). */
export const CONTACT_COLUMNS = RESERVED_FIELDS.slice(0, 11).map((f) => f.name);

/** Reserved fields stored in the contact's `custom_field` object, with their types. */
export const RESERVED_EXTRAS: ReadonlyArray<{ name: string; type: FieldType }> = RESERVED_FIELDS.slice(11);

/** Placeholder names that are not fields; custom fields may not take them either. */
export const PLACEHOLDER_ONLY_NAMES = ['full_name', 'sender_name', 'sender_address', 'unsubscribe_preferences'];

/** Names a custom field may not take. */
export const TAKEN_FIELD_NAMES = new Set<string>([...RESERVED_FIELDS.map((f) => f.name), ...PLACEHOLDER_ONLY_NAMES]);

/** Display label of a field name: `company_name` → `Company Name`. */
export function fieldLabel(name: string): string {
  let label = labels.get(name);
  if (label === undefined) {
    label = name
      .split('_')
      .filter(Boolean)
      .map((w) => w[0].toUpperCase() + w.slice(1))
      .join(' ');
    if (labels.size >= 10_000) labels.clear();
    labels.set(name, label);
  }
  return label;
}

// Labels are asked for every custom value of every contact served; the names repeat.
const labels = new Map<string, string>();
