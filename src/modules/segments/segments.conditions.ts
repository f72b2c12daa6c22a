import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { jsonText, numericOrNull, type Engine } from '../../db/dialect.js';
import { messages, type Rules } from '../../http/messages.js';
import { CONTACT_COLUMNS, RESERVED_FIELDS } from '../../reference/fields.js';
import { allCountries, findCountry } from '../../reference/geo.js';
import {
  daysFailure,
  engagementSql,
  ENGAGEMENT_FIELD,
  ENGAGEMENT_OPERATORS,
  SINGLE_SEND_FIELD,
  SINGLE_SEND_OPERATORS,
  singleSendSql,
} from './segments.engagement.js';

/** The operators a segment condition may use; which of them suit a field depends on its kind. */
export const OPERATORS = [
  'is',
  'is not',
  'contains',
  'does not contain',
  'starts with',
  'ends with',
  'is empty',
  'is not empty',
  'greater than',
  'less than',
  'between',
  'before',
  'after',
  ...ENGAGEMENT_OPERATORS,
  ...SINGLE_SEND_OPERATORS,
] as const;
export type Operator = (typeof OPERATORS)[number];

/**
 * How a field compares: as text, as a number, or as a date-time; or what the contact's address
 * received, opened and clicked (`engagement`: within a number of days; `single_send`: of one send).
 */
export type FieldKind = 'text' | 'number' | 'date' | 'engagement' | 'single_send';

/** One condition: a field, an operator and its 0, 1 or 2 values. */
export interface Condition {
  field: string;
  operator: Operator;
  values: string[];
  /** Where its first value stands in the body's `value` (when the entries could be matched to conditions). */
  at?: number;
}

const TEXT_OPS: readonly Operator[] = [
  'is',
  'is not',
  'contains',
  'does not contain',
  'starts with',
  'ends with',
  'is empty',
  'is not empty',
];
const KIND_OPS: Record<FieldKind, readonly Operator[]> = {
  text: TEXT_OPS,
  number: [...TEXT_OPS, 'greater than', 'less than', 'between'],
  date: [...TEXT_OPS, 'before', 'after', 'between'],
  engagement: ENGAGEMENT_OPERATORS,
  single_send: SINGLE_SEND_OPERATORS,
};
const COLUMN_FIELDS = new Set<string>([...CONTACT_COLUMNS, 'created_at']);
const DATE_RE = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2})(:\d{2})?)?$/;
const NUMBER_RE = /^[-+]?(\d+\.?\d*|\.\d+)$/;

/** How many entries of `value` an operator takes. */
export function arity(op: string): number {
  return op === 'between' ? 2 : op === 'is empty' || op === 'is not empty' ? 0 : 1;
}

/** Whether an operator compares its values as numbers or dates (else as text) for a field kind. */
function typedValues(kind: FieldKind, op: Operator): boolean {
  return (kind === 'number' || kind === 'date') && !['contains', 'does not contain', 'starts with', 'ends with'].includes(op);
}

/**
 * The fields a condition may name: the reserved fields, `created_at`, `engagement`,
 * `single_send`, and the account's custom fields (`field_type` by name), each with how it
 * compares. A custom field named like one of the others is not offered (the others come first).
 */
export function fieldCatalogue(customTypes: Map<string, { field_type: string }>): Map<string, FieldKind> {
  const kindOf = (type: string): FieldKind => (type === 'number' ? 'number' : type === 'datetime-local' ? 'date' : 'text');
  const out = new Map<string, FieldKind>();
  for (const f of RESERVED_FIELDS) out.set(f.name, kindOf(f.type));
  out.set('created_at', 'date');
  out.set(ENGAGEMENT_FIELD, 'engagement');
  out.set(SINGLE_SEND_FIELD, 'single_send');
  for (const [name, def] of customTypes) if (!out.has(name)) out.set(name, kindOf(def.field_type));
  return out;
}

/** A date value → its bounds at second precision; a date alone covers the whole day. */
function dateBounds(value: string): { start: string; end: string; day: boolean } | null {
  const m = DATE_RE.exec(value);
  if (!m) return null;
  const start = `${m[1]}T${m[2] ?? '00:00'}${m[3] ?? ':00'}`;
  const ms = Date.parse(start + 'Z');
  // Date.parse rolls 2024-02-30 over to March; a real date reads back the same.
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 19) !== start) return null;
  if (m[2]) return { start, end: start, day: false };
  const next = new Date(Date.parse(`${m[1]}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 19);
  return { start, end: next, day: true };
}

/**
 * The value check of one condition's entry, or null when it is fine. A `single_send` value (a
 * send of the account) needs the database: the service checks it (see `Condition.at`).
 */
function valueFailure(kind: FieldKind, op: Operator, key: string, value: string): string | null {
  if (kind === 'engagement') return daysFailure(key, value);
  if (!typedValues(kind, op)) return null;
  if (kind === 'number') return NUMBER_RE.test(value) ? null : messages.number(key);
  return dateBounds(value) ? null : messages.date(key);
}

/**
 * Checks the condition arrays of a create/update body and returns the conditions. Failures go to
 * `rules` keyed `select_field.<i>`, `select_operator.<i>` and `value.<k>` (k = index in `value`,
 * which holds each condition's entries in order).
 */
export function parseConditions(
  input: { select_field?: string[]; select_operator?: string[]; value?: string[] },
  catalogue: Map<string, FieldKind>,
  rules: Rules,
): Condition[] {
  // A body whose arrays failed the schema (an object, say) has already failed; read it as empty.
  const list = (v: unknown): string[] => (Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : String(x))) : []);
  const fields = list(input.select_field);
  const ops = list(input.select_operator);
  const values = list(input.value);
  const out: Condition[] = [];
  let cursor = 0;
  let aligned = !rules.failed('value');
  // Field names match case-insensitively, as custom field names are unique that way; stored as defined.
  const byLower = new Map([...catalogue.keys()].map((name) => [name.toLowerCase(), name]));
  for (let i = 0; i < Math.max(fields.length, ops.length); i++) {
    const field =
      fields[i] === undefined ? undefined : catalogue.has(fields[i]) ? fields[i] : (byLower.get(fields[i].toLowerCase()) ?? fields[i]);
    const op = ops[i]?.toLowerCase().replace(/\s+/g, ' ') as Operator | undefined;
    const kind = field === undefined ? undefined : catalogue.get(field);
    if (field === undefined) rules.add(`select_field.${i}`, messages.required(`select_field.${i}`));
    else if (!kind && !rules.failed(`select_field.${i}`)) rules.add(`select_field.${i}`, messages.invalid(`select_field.${i}`));
    if (op === undefined) rules.add(`select_operator.${i}`, messages.required(`select_operator.${i}`));
    else if (!OPERATORS.includes(op) || (kind && !KIND_OPS[kind].includes(op))) {
      rules.add(`select_operator.${i}`, messages.invalid(`select_operator.${i}`));
    }
    // Without a known operator the entries of `value` cannot be matched to conditions any more.
    if (op === undefined || !OPERATORS.includes(op)) {
      aligned = false;
      continue;
    }
    const own = values.slice(cursor, cursor + arity(op));
    for (let j = 0; j < arity(op) && aligned; j++) {
      const key = `value.${cursor + j}`;
      if (own[j] === undefined) rules.add(key, messages.required(key));
      else if (kind && KIND_OPS[kind].includes(op)) {
        const failure = valueFailure(kind, op, key, own[j]);
        if (failure) rules.add(key, failure);
      }
    }
    if (field !== undefined) out.push({ field, operator: op, values: own, ...(aligned ? { at: cursor } : {}) });
    cursor += arity(op);
  }
  if (aligned && values.length > cursor) rules.add('value', messages.maxItems('value', cursor));
  return out;
}

/** The stored arrays of a segment → its conditions (entries of `value` taken in order). */
export function conditionsOf(fields: string[], ops: string[], values: string[]): Condition[] {
  const out: Condition[] = [];
  let cursor = 0;
  fields.forEach((field, i) => {
    const op = ops[i] as Operator;
    out.push({ field, operator: op, values: values.slice(cursor, cursor + arity(op)) });
    cursor += arity(op);
  });
  return out;
}

const TRUE = sql<SqlBool>`1 = 1`;
const FALSE = sql<SqlBool>`1 = 0`;

/** `%`, `_` and the escape character itself are literal in the user's value. */
function likePattern(value: string, before: string, after: string): string {
  return before + value.replace(/[\\%_]/g, (ch) => '\\' + ch) + after;
}

/** Text comparisons, case-insensitive; the negative ones also match an empty value. */
function textCondition(v: RawBuilder<unknown>, op: Operator, x: string): RawBuilder<SqlBool> {
  const like = (pattern: string, not: boolean) =>
    not
      ? sql<SqlBool>`(${v} is null or lower(${v}) not like lower(${pattern}) escape '\\')`
      : sql<SqlBool>`lower(${v}) like lower(${pattern}) escape '\\'`;
  switch (op) {
    case 'is':
      return sql<SqlBool>`lower(${v}) = lower(${x})`;
    case 'is not':
      return sql<SqlBool>`(${v} is null or lower(${v}) <> lower(${x}))`;
    case 'contains':
    case 'does not contain':
      return like(likePattern(x, '%', '%'), op === 'does not contain');
    case 'starts with':
      return like(likePattern(x, '', '%'), false);
    case 'ends with':
      return like(likePattern(x, '%', ''), false);
    default:
      return FALSE;
  }
}

/** `country` holds a country id: text operators compare against the country's name (or id / ISO-2 for `is`). */
function countryCondition(op: Operator, x: string): RawBuilder<SqlBool> {
  const needle = x.toLowerCase();
  let ids: number[];
  if (op === 'is' || op === 'is not') {
    const c = findCountry(x);
    ids = c ? [c.id] : [];
  } else {
    const test = (name: string) =>
      op === 'starts with' ? name.startsWith(needle) : op === 'ends with' ? name.endsWith(needle) : name.includes(needle);
    ids = allCountries()
      .filter((c) => test(c.name.toLowerCase()))
      .map((c) => c.id);
  }
  const negative = op === 'is not' || op === 'does not contain';
  if (ids.length === 0) return negative ? TRUE : FALSE;
  const list = sql.join(ids.map((id) => String(id)));
  return negative ? sql<SqlBool>`c.country not in (${list})` : sql<SqlBool>`c.country in (${list})`;
}

/** Numeric comparisons on a number field; a value that is not a number matches only `is not`. */
function numberCondition(engine: Engine, v: RawBuilder<unknown>, op: Operator, xs: string[]): RawBuilder<SqlBool> {
  const n = numericOrNull(engine, v);
  const [a, b] = xs.map(Number);
  switch (op) {
    case 'is':
      return sql<SqlBool>`${n} = ${a}`;
    case 'is not':
      return sql<SqlBool>`(${n} is null or ${n} <> ${a})`;
    case 'greater than':
      return sql<SqlBool>`${n} > ${a}`;
    case 'less than':
      return sql<SqlBool>`${n} < ${a}`;
    case 'between':
      return sql<SqlBool>`${n} between ${Math.min(a, b)} and ${Math.max(a, b)}`;
    default:
      return FALSE;
  }
}

/**
 * Date comparisons at second precision on `YYYY-MM-DDTHH:MM:SS` text. A date without a time is the
 * whole day: `after 2024-05-01` starts on May 2nd, `between` includes both end days.
 */
function dateCondition(key: RawBuilder<unknown>, op: Operator, xs: string[]): RawBuilder<SqlBool> {
  const bounds = xs.map(dateBounds);
  if (bounds.some((b) => !b)) return FALSE;
  const [a, b] = bounds as Array<{ start: string; end: string; day: boolean }>;
  const upTo = (x: { end: string; day: boolean }) => (x.day ? sql<SqlBool>`${key} < ${x.end}` : sql<SqlBool>`${key} <= ${x.end}`);
  switch (op) {
    case 'is':
      return a.day ? sql<SqlBool>`(${key} >= ${a.start} and ${key} < ${a.end})` : sql<SqlBool>`${key} = ${a.start}`;
    case 'is not':
      return sql<SqlBool>`(${key} is null or not ${dateCondition(key, 'is', xs)})`;
    case 'before':
      return sql<SqlBool>`${key} < ${a.start}`;
    case 'after':
      return a.day ? sql<SqlBool>`${key} >= ${a.end}` : sql<SqlBool>`${key} > ${a.start}`;
    case 'between': {
      const [lo, hi] = a.start <= b.start ? [a, b] : [b, a];
      return sql<SqlBool>`(${key} >= ${lo.start} and ${upTo(hi)})`;
    }
    default:
      return FALSE;
  }
}

/**
 * One condition over the contact aliased `c`; null-safe (never unknown), so `or` works. `now` is
 * where the engagement conditions' windows end.
 */
function conditionSql(engine: Engine, cond: Condition, kind: FieldKind | undefined, now: Date): RawBuilder<SqlBool> {
  const { field, operator: op, values } = cond;
  if (kind === 'engagement' || kind === 'single_send') {
    // A stored combination that does not fit (edited by hand) matches nothing.
    if (!KIND_OPS[kind].includes(op) || values.length !== 1) return FALSE;
    return kind === 'engagement' ? engagementSql(op, values[0], now) : singleSendSql(op, values[0]);
  }
  // A field that no longer exists (deleted custom field) reads as empty.
  const v: RawBuilder<unknown> = !kind
    ? sql`cast(null as text)`
    : COLUMN_FIELDS.has(field)
      ? sql.ref(`c.${field}`)
      : jsonText(engine, 'c.custom_field', field);
  if (op === 'is empty') return sql<SqlBool>`(${v} is null or ${v} = '')`;
  if (op === 'is not empty') return sql<SqlBool>`(${v} is not null and ${v} <> '')`;
  const effective: 'text' | 'number' | 'date' = kind ?? 'text';
  // A stored combination that no longer fits (the field was re-created with another type) matches nothing.
  if (!KIND_OPS[effective].includes(op) || values.length !== arity(op)) return FALSE;
  if (!typedValues(effective, op)) return field === 'country' && kind ? countryCondition(op, values[0]) : textCondition(v, op, values[0]);
  if (values.some((x, i) => valueFailure(effective, op, `value.${i}`, x))) return FALSE;
  if (effective === 'number') return numberCondition(engine, v, op, values);
  const key =
    field === 'created_at'
      ? sql`substr(c.created_at, 1, 19)`
      : sql`(case when length(${v}) = 16 then ${v} || ':00' else substr(${v}, 1, 19) end)`;
  return dateCondition(key, op, values);
}

/**
 * The WHERE expression of a segment's conditions over contacts aliased `c`: all of them (`and`,
 * the default) or any (`or`); no conditions match every contact of the type. Engagement
 * conditions are evaluated as of `now`.
 */
export function conditionsSql(
  engine: Engine,
  conds: Condition[],
  queryType: string | null,
  catalogue: Map<string, FieldKind>,
  now: Date,
): RawBuilder<SqlBool> {
  if (conds.length === 0) return TRUE;
  const parts = conds.map((c) => sql<SqlBool>`(${conditionSql(engine, c, catalogue.get(c.field), now)})`);
  return sql<SqlBool>`(${sql.join(parts, queryType === 'or' ? sql` or ` : sql` and `)})`;
}
