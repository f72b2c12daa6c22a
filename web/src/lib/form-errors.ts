/**
 * A refusal's field errors as a form shows them: each message worded with the form's own label
 * (`The country id field is required.` → `The country field is required.`), in the form's order,
 * and the focus on the first field marked invalid.
 */

/** A form's fields in the order it shows them: the API's field name and the form's label. */
export type FieldLabels = ReadonlyArray<readonly [field: string, label: string]>;

/** One field's errors, worded with its label. */
export interface FieldProblem {
  field: string;
  label: string;
  messages: string[];
}

/**
 * The name the API's messages give a field (Laravel's attribute name): `contact_type_id` →
 * `contact type id`, `custom_field.age` → `age`, `email_owner` → `name`.
 */
export function apiName(field: string): string {
  if (field === 'email_owner') return 'name';
  const name = field.startsWith('custom_field.') ? field.slice('custom_field.'.length) : field;
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/_/g, ' ');
}

/** A label as it reads inside a sentence: `Reply-to email` → `reply-to email`; `URL` and `Endpoint URL`'s `URL` stay. */
function inSentence(label: string): string {
  return /^[A-Z][a-z]/.test(label) ? label[0].toLowerCase() + label.slice(1) : label;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `message` with the API's name of `field` replaced by `label` (a message that does not name it is kept as it is). */
export function relabel(message: string, field: string, label: string): string {
  const name = apiName(field);
  if (!name) return message;
  const pattern = new RegExp(`(^|[\\s"“(])${escape(name)}(?=$|[\\s.,:;"”)])`, 'i');
  return message.replace(pattern, (_, before: string) => before + inSentence(label));
}

/**
 * The field errors of a refusal, in the order of `labels` and worded with them; fields the form
 * does not list come last, as the API worded them. An item of a listed array field (`emails.1`)
 * is that field's error, worded with its number (`The test addresses (2) must be …`).
 */
export function fieldProblems(fields: Record<string, string[]>, labels: FieldLabels = []): FieldProblem[] {
  const order = new Map(labels.map(([field], i) => [field, i]));
  const labelOf = new Map(labels);
  const problems = new Map<string, FieldProblem>();
  for (const [key, messages] of Object.entries(fields)) {
    if (!Array.isArray(messages) || !messages.length) continue;
    const item = /^(.+)\.(\d+)$/.exec(key);
    const field = !labelOf.has(key) && item && labelOf.has(item[1]) ? item[1] : key;
    const base = labelOf.get(field);
    const label = base === undefined ? undefined : field === key ? base : `${base} (${Number(item![2]) + 1})`;
    const worded = label === undefined ? messages : messages.map((m) => relabel(m, key, label));
    const known = problems.get(field);
    if (known) known.messages.push(...worded);
    else problems.set(field, { field, label: base ?? apiName(key), messages: [...worded] });
  }
  return [...problems.values()].sort((a, b) => (order.get(a.field) ?? Infinity) - (order.get(b.field) ?? Infinity));
}

/** Moves the focus to the first field marked invalid (`aria-invalid="true"`) inside `root`, in the page's order. */
export function focusFirstInvalid(root: ParentNode | null | undefined): void {
  const first = (root ?? document).querySelector<HTMLElement>('[aria-invalid="true"]');
  first?.focus();
}

/** The attributes of a field with errors: `aria-invalid` and the id of its message (plus any other descriptions). */
export function invalidAttrs(
  errors: string[] | undefined,
  errorId: string,
  ...describedBy: Array<string | undefined | false>
): { 'aria-invalid'?: 'true'; 'aria-describedby'?: string } {
  const ids = [...describedBy.filter(Boolean), errors?.length ? errorId : ''].filter(Boolean).join(' ');
  return { 'aria-invalid': errors?.length ? 'true' : undefined, 'aria-describedby': ids || undefined };
}
