import type { FastifySchemaValidationError } from 'fastify';
import { ValidationError, type FieldErrors } from './errors.js';
import { isUniqueViolation } from '../db/dialect.js';

/** Labels that differ from the field name: `email_owner` is reported as `name`. */
const LABELS: Record<string, string> = { email_owner: 'name' };

/** Laravel's attribute label: `contact_type_id` → `contact type id`, `custom_field.age` → `age`. */
export function label(field: string): string {
  if (LABELS[field]) return LABELS[field];
  const name = field.startsWith('custom_field.') ? field.slice('custom_field.'.length) : field;
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/_/g, ' ');
}

/** The validation messages, in Laravel's English wording (the API's clients match on these texts). */
export const messages = {
  required: (f: string) => (f === 'email_owner' ? 'The name field is required' : `The ${label(f)} field is required.`),
  email: (f: string) => `The ${label(f)} must be a valid email address.`,
  minString: (f: string, n: number) => `The ${label(f)} must be at least ${n} characters.`,
  maxString: (f: string, n: number) => `The ${label(f)} must not be greater than ${n} characters.`,
  minNumber: (f: string, n: number) => `The ${label(f)} must be at least ${n}.`,
  maxNumber: (f: string, n: number) => `The ${label(f)} must not be greater than ${n}.`,
  minItems: (f: string, n: number) => `The ${label(f)} must have at least ${n} items.`,
  maxItems: (f: string, n: number) => `The ${label(f)} must not have more than ${n} items.`,
  integer: (f: string) => `The ${label(f)} must be an integer.`,
  number: (f: string) => `The ${label(f)} must be a number.`,
  string: (f: string) => `The ${label(f)} must be a string.`,
  array: (f: string) => `The ${label(f)} must be an array.`,
  boolean: (f: string) => `The ${label(f)} field must be true or false.`,
  invalid: (f: string) => `The selected ${label(f)} is invalid.`,
  unique: (f: string) => `The ${label(f)} has already been taken.`,
  format: (f: string) => `The ${label(f)} format is invalid.`,
  fileType: (f: string, types: string) => `The ${label(f)} must be a file of type: ${types}.`,
  date: (f: string) => `The ${label(f)} is not a valid date.`,
};

function keyOf(path: string, child?: string): string {
  const parts = path.split('/').filter(Boolean);
  if (child !== undefined) parts.push(child);
  return parts.join('.');
}

/** One AJV error → [field, message]. */
function translate(e: FastifySchemaValidationError): [string, string] {
  const p = (e.params ?? {}) as { limit: number; missingProperty?: string; [k: string]: unknown };
  if (e.keyword === 'required') {
    const field = keyOf(e.instancePath, String(p.missingProperty));
    return [field, messages.required(field)];
  }
  const field = keyOf(e.instancePath) || 'body';
  switch (e.keyword) {
    case 'type': {
      const type = Array.isArray(p.type) ? p.type[0] : p.type;
      if (type === 'integer') return [field, messages.integer(field)];
      if (type === 'number') return [field, messages.number(field)];
      // Laravel's `array` rule covers objects (custom_field[...]) too.
      if (type === 'array' || type === 'object') return [field, messages.array(field)];
      if (type === 'boolean') return [field, messages.boolean(field)];
      return [field, messages.string(field)];
    }
    case 'format':
      if (p.format === 'email') return [field, messages.email(field)];
      if (p.format === 'date' || p.format === 'date-time' || p.format === 'time') return [field, messages.date(field)];
      return [field, messages.format(field)];
    case 'minLength':
      return [field, p.limit <= 1 ? messages.required(field) : messages.minString(field, p.limit)];
    case 'maxLength':
      return [field, messages.maxString(field, p.limit)];
    case 'minimum':
      return [field, messages.minNumber(field, p.limit)];
    case 'maximum':
      return [field, messages.maxNumber(field, p.limit)];
    case 'minItems':
      return [field, p.limit <= 1 ? messages.required(field) : messages.minItems(field, p.limit)];
    case 'maxItems':
      return [field, messages.maxItems(field, p.limit)];
    case 'enum':
    case 'const':
      return [field, messages.invalid(field)];
    case 'pattern':
      return [field, messages.format(field)];
    default:
      return [field, messages.format(field)];
  }
}

/** AJV errors → field errors, every failing field with its own array, messages deduplicated. */
export function fieldErrorsFromAjv(errors: readonly FastifySchemaValidationError[]): FieldErrors {
  const out: FieldErrors = {};
  for (const e of errors) {
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === 'if') continue;
    const [field, message] = translate(e);
    const list = (out[field] ??= []);
    if (!list.includes(message)) list.push(message);
  }
  return out;
}

/**
 * Collects the failures of a request: the schema's (passed in) and the service's database rules
 * (exists, unique), so that every failure of a request is reported together in one 422.
 */
export class Rules {
  readonly errors: FieldErrors;

  constructor(initial: FieldErrors = {}) {
    this.errors = { ...initial };
  }

  /** True when `field` already failed (its value must then not be trusted). */
  failed(field: string): boolean {
    return field in this.errors;
  }

  add(field: string, message: string): void {
    const list = (this.errors[field] ??= []);
    if (!list.includes(message)) list.push(message);
  }

  /** Runs `test` on a present value of a field that passed so far; a returned text is its failure. */
  async check<T>(field: string, value: T | undefined | null, test: (value: T) => Promise<string | null> | string | null): Promise<void> {
    if (value === undefined || value === null || this.failed(field)) return;
    const failure = await test(value);
    if (failure) this.add(field, failure);
  }

  /** Throws the collected failures, if any. */
  done(): void {
    if (Object.keys(this.errors).length > 0) throw new ValidationError(this.errors);
  }
}

/**
 * Runs a write guarded by a unique index. The service checks uniqueness first for a clear answer;
 * this turns the violation of a concurrent duplicate into the same field failure instead of a 500.
 */
export async function uniqueOr<T>(field: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) throw new ValidationError({ [field]: [messages.unique(field)] });
    throw err;
  }
}
