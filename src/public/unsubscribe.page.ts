/**
 * The HTML of the unsubscribe preferences page and its answers: plain server-rendered pages, a
 * form that works without JavaScript, readable on a phone. Every value from the database is
 * escaped here; the only style is one inline block allowed by its hash in the Content-Security-Policy,
 * and no script may run at all.
 */
import { createHash } from 'node:crypto';
import { escapeHtml } from '../delivery/placeholders.js';

const STYLE =
  'body{font-family:system-ui,-apple-system,sans-serif;max-width:34rem;margin:2rem auto;padding:0 1rem;color:#222;line-height:1.5}' +
  'h1{font-size:1.4rem}fieldset{border:1px solid #ccc;border-radius:.4rem;margin:1rem 0;padding:.5rem 1rem}' +
  'label{display:flex;gap:.6rem;align-items:flex-start;padding:.5rem 0;font-size:1.05rem}' +
  'input[type=checkbox]{width:1.3rem;height:1.3rem;flex:none;margin-top:.15rem}' +
  'small{display:block;color:#555}.note{background:#eef7ee;border:1px solid #9c9;border-radius:.4rem;padding:.5rem 1rem}' +
  'button{font-size:1.05rem;padding:.6rem 1.4rem;border-radius:.4rem;border:1px solid #246;background:#246;color:#fff}';

/**
 * The page's security headers. No script source at all, the one style by hash, forms posting only
 * back to this server, never framed, no referrer (the URL carries the token).
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; ` +
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
};

/** A whole page around `body` (already escaped HTML). */
function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style>
</head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

/** One group as the page lists it. */
export interface GroupChoice {
  id: number;
  name: string;
  description: string;
  /** The address is on the group's list (receives no mail sent under it). */
  unsubscribed: boolean;
}

export interface PreferencesView {
  email: string;
  global: boolean;
  groups: GroupChoice[];
  /** A line shown above the form (after saving). */
  notice?: string;
}

function checkbox(name: string, value: string, checked: boolean, label: string, hint: string): string {
  return (
    `<label><input type="checkbox" name="${name}" value="${escapeHtml(value)}"${checked ? ' checked' : ''}>` +
    `<span>${escapeHtml(label)}${hint ? `<small>${escapeHtml(hint)}</small>` : ''}</span></label>`
  );
}

/**
 * The preferences page: a checked box means "no more of these". The form posts back to the same
 * URL (no `action`), a `preferences` field telling it apart from a one-click unsubscribe.
 */
export function preferencesPage(view: PreferencesView): string {
  const groups = view.groups.length
    ? `<fieldset><legend>Unsubscribe from these emails</legend>${view.groups
        .map((g) => checkbox('groups', String(g.id), g.unsubscribed, g.name, g.description))
        .join('')}</fieldset>`
    : '';
  return page(
    'Email preferences',
    (view.notice ? `<p class="note" role="status">${escapeHtml(view.notice)}</p>` : '') +
      `<p>Choose which emails <b>${escapeHtml(view.email)}</b> receives from us.</p>` +
      `<form method="post"><input type="hidden" name="preferences" value="1">${groups}` +
      `<fieldset><legend>Everything</legend>${checkbox('global', '1', view.global, 'Unsubscribe from all emails', 'No email of any kind from this sender.')}</fieldset>` +
      `<p><button type="submit">Save preferences</button></p></form>`,
  );
}

/** A short page saying one thing (one-click confirmation, an invalid link, a bad form). */
export function messagePage(title: string, text: string): string {
  return page(title, `<p>${escapeHtml(text)}</p>`);
}
