/**
 * The HTML of the unsubscribe preferences page: a plain server-rendered page (see page.ts), a
 * form that works without JavaScript, readable on a phone. Every value from the database is
 * escaped here.
 */
import { escapeHtml } from '../delivery/placeholders.js';
import { plainPage } from './page.js';

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
  /** The name the reader knows the sender by (null: unknown, the page says "this sender"). */
  sender: string | null;
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
  const from = view.sender ? `<b>${escapeHtml(view.sender)}</b>` : 'this sender';
  const everything = `No email of any kind from ${view.sender ?? 'this sender'}.`;
  return plainPage(
    'Email preferences',
    (view.notice ? `<p class="note" role="status">${escapeHtml(view.notice)}</p>` : '') +
      `<p>Choose which emails <b>${escapeHtml(view.email)}</b> receives from ${from}.</p>` +
      `<form method="post"><input type="hidden" name="preferences" value="1">${groups}` +
      `<fieldset><legend>Everything</legend>${checkbox('global', '1', view.global, 'Unsubscribe from all emails', everything)}</fieldset>` +
      `<p><button type="submit">Save preferences</button></p></form>`,
  );
}
