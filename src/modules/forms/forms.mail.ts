/**
 * The confirmation mail of a sign-up: from the form's verified sender, the form's text (or ours)
 * and the link to the confirmation page. What it said is kept as the proof of consent.
 */
import { escapeHtml } from '../../delivery/placeholders.js';
import type { MailMessage } from '../../delivery/transport.js';
import type { SenderRow } from '../senders/senders.schema.js';
import type { FormRow } from './forms.schema.js';

export const DEFAULT_SUBJECT = 'Please confirm your subscription';
export const DEFAULT_TEXT =
  'Please confirm that you want to receive our emails at this address: open the link below and press "Confirm subscription".';
const FOOTER = 'If you did not sign up, ignore this mail: you will not be subscribed and will hear no more from us.';

/** The link of a confirmation: `{PUBLIC_URL}/subscribe/confirm/<token>`. */
export function confirmationLink(publicUrl: string, token: string): string {
  return `${publicUrl}/subscribe/confirm/${token}`;
}

/**
 * The confirmation mail to `email`, and its subject and text as kept for the proof: the text as
 * sent, with the link's token written `<token>` (the token is a credential until it is used, and
 * only its hash is stored).
 */
export function confirmationMail(
  publicUrl: string,
  form: Pick<FormRow, 'confirmation_subject' | 'confirmation_text'>,
  sender: Pick<SenderRow, 'from_name' | 'from_email' | 'reply_to_email'>,
  email: string,
  token: string,
  validDays: number,
): { message: MailMessage; subject: string; recordText: string } {
  const subject = form.confirmation_subject ?? DEFAULT_SUBJECT;
  const intro = form.confirmation_text ?? DEFAULT_TEXT;
  const link = confirmationLink(publicUrl, token);
  const validity = `The link works for ${validDays} days.`;
  const text = (url: string) => [intro, '', url, '', validity, FOOTER].join('\n');
  const paragraphs = intro
    .split(/\n\s*\n/)
    .map((p) => `<p>${escapeHtml(p).replace(/\n/g, '<br>')}</p>`)
    .join('');
  const html =
    paragraphs +
    `<p><a href="${escapeHtml(link)}">Confirm your subscription</a></p>` +
    `<p>${escapeHtml(validity)} ${escapeHtml(FOOTER)}</p>`;
  return {
    message: {
      from: { name: sender.from_name, address: sender.from_email },
      replyTo: sender.reply_to_email,
      to: email,
      subject,
      text: text(link),
      html,
      headers: { 'Auto-Submitted': 'auto-generated' },
    },
    subject,
    recordText: text(confirmationLink(publicUrl, '<token>')),
  };
}
