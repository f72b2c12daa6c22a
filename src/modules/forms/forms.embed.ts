/**
 * The HTML a form's owner pastes into any page: a plain `<form>` that posts to the service, with a
 * labelled input per field and a honeypot. It needs no script and no CORS (a form post goes
 * anywhere). Every value is escaped.
 */
import { escapeHtml } from '../../delivery/placeholders.js';
import { fieldLabel, RESERVED_FIELDS } from '../../reference/fields.js';

/** The honeypot: hidden from people, filled by bots; a post that fills it is dropped quietly. */
export const HONEYPOT = 'website';

const RESERVED_TYPES = new Map<string, string>(RESERVED_FIELDS.map((f) => [f.name, f.type]));

/** Where a form posts: `{PUBLIC_URL}/subscribe/<id>`. */
export function subscribeUrl(publicUrl: string, formId: number): string {
  return `${publicUrl}/subscribe/${formId}`;
}

/** The name of a field's input: reserved fields by their name, custom fields as `custom_field[<name>]`. */
export function inputName(field: string): string {
  return RESERVED_TYPES.has(field) ? field : `custom_field[${field}]`;
}

function inputType(field: string, type: string | undefined): string {
  if (field === 'email' || field === 'alt_email') return 'email';
  if (type === 'number') return 'number';
  if (type === 'datetime-local') return 'datetime-local';
  return 'text';
}

/**
 * The form's HTML for `fields` (`email` first). Custom fields are text inputs whatever their type:
 * the service checks every value on arrival.
 */
export function embedHtml(publicUrl: string, formId: number, fields: readonly string[]): string {
  const rows = fields.map((f) => {
    const id = `cf${formId}-${f}`;
    const type = inputType(f, RESERVED_TYPES.get(f));
    const label = f === 'country' ? 'Country (name or code)' : fieldLabel(f);
    const extra = f === 'email' ? ' required autocomplete="email"' : '';
    return (
      `  <p><label for="${escapeHtml(id)}">${escapeHtml(label)}</label><br>` +
      `<input type="${type}" id="${escapeHtml(id)}" name="${escapeHtml(inputName(f))}"${extra}></p>`
    );
  });
  return [
    `<form method="post" action="${escapeHtml(subscribeUrl(publicUrl, formId))}" accept-charset="utf-8">`,
    ...rows,
    `  <div aria-hidden="true" style="position:absolute;left:-5000px"><label>Leave this empty <input type="text" name="${HONEYPOT}" tabindex="-1" autocomplete="off"></label></div>`,
    '  <p><button type="submit">Subscribe</button></p>',
    '</form>',
  ].join('\n');
}
