/**
 * The condition builder's rules: which operators suit which kind of field, how many values each
 * takes, and how rows become the API's three arrays (`select_field[i]`, `select_operator[i]`, and
 * `value`, each condition's entries in order). They mirror the service's checks, which decide.
 */
import type { FieldDef } from './types';

/**
 * How a field compares: as text, a number or a date; or what the contact's address received,
 * opened and clicked (`engagement`: within a number of days; `single_send`: of one send).
 */
export type FieldKind = 'text' | 'number' | 'date' | 'engagement' | 'single_send';

/** One field a condition can name, with how it compares and the group it is listed in. */
export interface FieldChoice {
  name: string;
  label: string;
  kind: FieldKind;
  group: 'Contact fields' | 'Custom fields' | 'Engagement' | 'Other';
}

/** One row of the builder; `key` only keeps the rows apart while they are edited. */
export interface ConditionRow {
  key: number;
  field: string;
  operator: string;
  values: [string, string];
}

const TEXT_OPS = ['is', 'is not', 'contains', 'does not contain', 'starts with', 'ends with', 'is empty', 'is not empty'];
/** The operators each kind of field takes. */
export const KIND_OPS: Record<FieldKind, string[]> = {
  text: TEXT_OPS,
  number: [...TEXT_OPS, 'greater than', 'less than', 'between'],
  date: [...TEXT_OPS, 'before', 'after', 'between'],
  engagement: [
    'opened in the last',
    'clicked in the last',
    'received in the last',
    'not opened in the last',
    'not clicked in the last',
    'not received in the last',
  ],
  single_send: ['received', 'opened', 'clicked', 'not received', 'not opened', 'not clicked'],
};

/** The names the engagement conditions go by (no custom field of these names can be used). */
export const ENGAGEMENT_FIELDS = ['engagement', 'single_send'];

/** The days of a new engagement condition, and their range. */
export const DEFAULT_DAYS = '30';
export const MIN_DAYS = 1;
export const MAX_DAYS = 3650;

/** How many values an operator takes: two for `between`, none for the empty checks, else one. */
export function arity(op: string): number {
  return op === 'between' ? 2 : op === 'is empty' || op === 'is not empty' ? 0 : 1;
}

/** Whether the operator compares as a number or a date (else as text, whatever the field). */
export function typedOperator(kind: FieldKind, op: string): boolean {
  return (kind === 'number' || kind === 'date') && !['contains', 'does not contain', 'starts with', 'ends with'].includes(op);
}

/** `field_type` → how the field compares. */
export function kindOf(fieldType: string): FieldKind {
  return fieldType === 'number' ? 'number' : fieldType === 'datetime-local' ? 'date' : 'text';
}

/** `company_name` → `Company name`. */
export function labelOf(name: string): string {
  const words = name.replace(/_/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * The fields a condition may name: the reserved ones, the account's custom ones, the engagement
 * of the contact's address (any message, or one single send), and `created_at`.
 */
export function fieldChoices(reserved: FieldDef[], custom: FieldDef[]): FieldChoice[] {
  const out: FieldChoice[] = reserved.map((f) => ({
    name: f.field_name,
    label: labelOf(f.field_name),
    kind: kindOf(f.field_type),
    group: 'Contact fields',
  }));
  const taken = new Set([...out.map((f) => f.name.toLowerCase()), ...ENGAGEMENT_FIELDS]);
  for (const f of custom) {
    if (!taken.has(f.field_name.toLowerCase()))
      out.push({ name: f.field_name, label: f.field_name, kind: kindOf(f.field_type), group: 'Custom fields' });
  }
  out.push({ name: 'engagement', label: 'Any message (days)', kind: 'engagement', group: 'Engagement' });
  out.push({ name: 'single_send', label: 'A single send', kind: 'single_send', group: 'Engagement' });
  out.push({ name: 'created_at', label: 'Date added (created_at)', kind: 'date', group: 'Other' });
  return out;
}

/** The operator and values a row starts with when its field becomes one of `kind`. */
export function startOf(kind: FieldKind, firstSend = ''): { operator: string; values: [string, string] } {
  if (kind === 'engagement') return { operator: 'opened in the last', values: [DEFAULT_DAYS, ''] };
  if (kind === 'single_send') return { operator: 'opened', values: [firstSend, ''] };
  return { operator: 'is', values: ['', ''] };
}

let nextKey = 1;

/** A new row: the first field, `is`, no value yet. */
export function newRow(field = 'first_name', operator = 'is', values: string[] = []): ConditionRow {
  return { key: nextKey++, field, operator, values: [values[0] ?? '', values[1] ?? ''] };
}

/** A saved segment's arrays → rows (each condition takes its entries of `value` in order). */
export function rowsOf(fields: string[], operators: string[], values: string[]): ConditionRow[] {
  let cursor = 0;
  return fields.map((field, i) => {
    const op = operators[i] ?? 'is';
    const own = values.slice(cursor, cursor + arity(op));
    cursor += arity(op);
    return newRow(field, op, own);
  });
}

/** Rows → the API's arrays; a condition sends only the values its operator takes. */
export function arraysOf(rows: ConditionRow[]): { select_field: string[]; select_operator: string[]; value: string[] } {
  return {
    select_field: rows.map((r) => r.field),
    select_operator: rows.map((r) => r.operator),
    value: rows.flatMap((r) => r.values.slice(0, arity(r.operator)).map((v) => v.trim())),
  };
}

/** Where each row's values sit in `value`, to place the API's `value.<k>` errors on their inputs. */
export function valueOffsets(rows: ConditionRow[]): number[] {
  let cursor = 0;
  return rows.map((r) => {
    const at = cursor;
    cursor += arity(r.operator);
    return at;
  });
}

/** A stored date value in the form a date (or, with a time, a date-and-time) input shows. */
export function dateInputType(value: string): 'date' | 'datetime-local' {
  return /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(value) ? 'datetime-local' : 'date';
}

/** "1 contact matches", "12 contacts match". */
export function matchText(n: number): string {
  return n === 1 ? '1 contact matches' : `${n.toLocaleString('en')} contacts match`;
}
