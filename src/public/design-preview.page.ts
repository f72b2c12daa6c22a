/**
 * The design preview page of an automation email: the mail's headers and its HTML shown in a
 * sandboxed frame, with sample values in place of each contact's own. The design is the account
 * user's HTML and may hold anything (scripts included), so it only ever appears escaped inside the
 * frame's `srcdoc`, where no script may run; everything else on the page is escaped text.
 */
import { escapeHtml, PLACEHOLDER_NAMES } from '../delivery/placeholders.js';
import { fieldLabel } from '../reference/fields.js';
import { pageHeaders } from './page.js';

/** The sample contact every preview shows, one value per placeholder of a contact. */
export const SAMPLE_CONTACT: Readonly<Record<string, string>> = {
  first_name: 'Alex',
  last_name: 'Sample',
  email: 'alex@example.com',
  alt_email: 'alex.sample@example.org',
  country: 'United States',
  state: 'California',
  city: 'San Francisco',
  address_line1: '1 Sample Street',
  address_line2: 'Suite 100',
  state_province_region: 'CA',
  postal_code: '94105',
  full_name: 'Alex Sample',
  father_name: 'Sam Sample',
  designation: 'Marketing Manager',
  age: '34',
  company_name: 'Example Inc.',
  birth_date: '1991-04-12T09:00',
  join_date: '2024-01-15T10:30',
  // The preview must not unsubscribe anyone: the footer's link goes nowhere.
  unsubscribe_preferences: '#',
};

const KNOWN = new Set<string>(PLACEHOLDER_NAMES);

/**
 * A sample value for each custom field of the account a design uses (`names`, lower case): a
 * text, a number or a datetime-local value by the field's type. Placeholders that are neither a
 * known name nor a field stay out, so they render empty, as they will in the mail.
 */
export function customSamples(names: Iterable<string>, fields: ReadonlyMap<string, { field_type: string }>): Record<string, string> {
  const byKey = new Map([...fields].map(([name, f]) => [name.toLowerCase(), { name, type: f.field_type }]));
  const out: Record<string, string> = {};
  for (const key of names) {
    const field = KNOWN.has(key) ? undefined : byKey.get(key);
    if (!field) continue;
    out[key] = field.type === 'number' ? '42' : field.type === 'datetime-local' ? '2025-06-01T09:30' : `Sample ${fieldLabel(field.name)}`;
  }
  return out;
}

/** Whether a design uses a placeholder that is not one of the known ones (possibly a custom field). */
export function usesOtherNames(names: Iterable<string>): boolean {
  for (const key of names) if (!KNOWN.has(key) && !key.startsWith('#')) return true;
  return false;
}

const STYLE =
  'body{font-family:system-ui,-apple-system,sans-serif;max-width:46rem;margin:1.5rem auto;padding:0 1rem;color:#222;line-height:1.5}' +
  'h1{font-size:1.4rem;margin:0 0 1rem}dl{display:grid;grid-template-columns:auto 1fr;gap:.2rem .8rem;margin:0 0 1rem}' +
  'dt{color:#555}dd{margin:0;overflow-wrap:anywhere}' +
  'iframe{display:block;width:100%;height:75vh;min-height:24rem;border:1px solid #ccc;border-radius:.4rem;background:#fff}' +
  'small{display:block;color:#555;margin-top:.6rem}';

/**
 * The preview page's security headers. The email's frame inherits this policy (a `srcdoc` frame
 * always does), so it allows what an email needs to look right, inline styles, web fonts and
 * images from anywhere, and nothing else: no script, no form, no plugin, no frame of its own.
 * The page's own content is escaped text, so inline styles cost it nothing. No referrer, so the
 * image hosts an email loads from never learn the page's address.
 */
export const PREVIEW_HEADERS = pageHeaders(
  "default-src 'none'; style-src 'unsafe-inline' https:; img-src https: http: data:; font-src https: data:; " +
    "form-action 'none'; base-uri 'none'; frame-ancestors 'none'",
);

export interface PreviewView {
  subject: string;
  fromName: string;
  fromAddress: string;
  /** The email's HTML with sample values; shown only inside the sandboxed frame. */
  html: string;
}

/** `Name <address>`, or the address alone when there is no name. */
function mailbox(name: string, address: string): string {
  return name.trim() ? `${escapeHtml(name)} &lt;${escapeHtml(address)}&gt;` : escapeHtml(address);
}

/**
 * The whole preview page. The frame's `sandbox` has no flags at all: no script, no form, no
 * popup, no navigation of this page, and an origin of its own.
 */
export function previewPage(view: PreviewView): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><link rel="icon" href="data:,"><title>Email preview</title><style>${STYLE}</style>
</head><body><h1>Email preview</h1>
<dl><dt>From</dt><dd>${mailbox(view.fromName, view.fromAddress)}</dd>
<dt>To</dt><dd>${mailbox(SAMPLE_CONTACT.full_name, SAMPLE_CONTACT.email)}</dd>
<dt>Subject</dt><dd>${escapeHtml(view.subject)}</dd></dl>
<iframe title="The email" sandbox srcdoc="${escapeHtml(view.html)}"></iframe>
<small>Sample values (${escapeHtml(SAMPLE_CONTACT.full_name)}) stand in for each contact's own. Links do not open from the preview.</small>
</body></html>`;
}
