/**
 * The pages of sign-up forms: "check your inbox", the confirmation page with its button, and the
 * answers to a bad post or link. Plain server-rendered pages (see page.ts); every value is escaped.
 */
import { escapeHtml } from '../delivery/placeholders.js';
import { plainPage } from './page.js';

/** After a post: the mail is on its way (also shown when nothing was sent, so it reveals nothing). */
export function checkInboxPage(): string {
  return plainPage(
    'Check your inbox',
    '<p class="note" role="status">Almost done: we have sent you an email with a link. Open it and confirm your subscription.</p>' +
      '<p>If no email arrives within a few minutes, look in your spam folder.</p>',
  );
}

/** A post with values that could not be taken: every message, and the way back. */
export function invalidPostPage(errors: Record<string, string[]>): string {
  const items = Object.values(errors)
    .flat()
    .map((m) => `<li>${escapeHtml(m)}</li>`)
    .join('');
  return plainPage('Please check your details', `<ul>${items}</ul><p>Go back to the form, correct them and send it again.</p>`);
}

/**
 * The page of a confirmation link: a button that posts back to the same address. Opening the link
 * confirms nothing (mail scanners open links); pressing the button does.
 */
export function confirmPage(email: string): string {
  return plainPage(
    'Confirm your subscription',
    `<p>Press the button to confirm that <b>${escapeHtml(email)}</b> wants to receive our emails.</p>` +
      '<form method="post"><p><button type="submit">Confirm subscription</button></p></form>',
  );
}

/** After confirming (when the form names no page of its own). */
export function confirmedPage(email: string): string {
  return plainPage('Subscription confirmed', `<p class="note" role="status"><b>${escapeHtml(email)}</b> is now subscribed. Thank you!</p>`);
}
