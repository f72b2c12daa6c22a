import type { AppDeps } from '../../deps.js';
import type { Config } from '../../config.js';
import type { MailMessage } from '../../delivery/transport.js';
import { systemFrom } from '../../delivery/transports.js';
import type { Db } from '../../db/index.js';
import { emitEvents } from '../../events/outbox.js';
import { enqueueSystemMail } from './notifications.mail.js';
import { escapeHtml } from '../../delivery/placeholders.js';
import { selectNotificationRecipients } from './notifications.queries.js';

/** Events that mail every notification recipient of the account. */
export type EventName =
  | 'single_send.completed'
  | 'contacts.imported'
  | 'sender.verified'
  | 'automation.live'
  | 'automation.paused'
  | 'sending_domain.failed'
  | 'sending_domain.verified';

/** Subject and first sentence of each event's mail. */
const EVENTS: Record<EventName, { subject: string; sentence: string }> = {
  'single_send.completed': { subject: 'Single send completed', sentence: 'A single send has finished sending.' },
  'contacts.imported': { subject: 'Contacts imported', sentence: 'A CSV import of contacts has finished.' },
  'sender.verified': { subject: 'Sender verified', sentence: 'A sender address has been verified and can now be used.' },
  'automation.live': { subject: 'Automation set live', sentence: 'An automation has been set live.' },
  'automation.paused': { subject: 'Automation paused', sentence: 'An automation has been paused.' },
  'sending_domain.failed': {
    subject: 'Sending domain fails authentication',
    sentence: 'A sending domain no longer passes its DNS checks: its mail is held until it does. The checks below say what to publish.',
  },
  'sending_domain.verified': {
    subject: 'Sending domain verified',
    sentence: 'A sending domain passes its DNS checks again: its mail goes out.',
  },
};

/** At most this many detail lines per mail: the note stays short whatever a caller passes. */
const MAX_DETAILS = 20;

function detailLines(details: Record<string, unknown>): Array<[string, string]> {
  return Object.entries(details)
    .slice(0, MAX_DETAILS)
    .map(([k, v]) => [k, v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v)]);
}

/** The short note one recipient gets for one event (text and HTML, every value escaped in the HTML). */
export function eventMail(
  config: Pick<Config, 'dkim' | 'publicUrl'>,
  recipient: { email_address: string; email_owner: string },
  event: EventName,
  details: Record<string, unknown>,
): MailMessage {
  const { subject, sentence } = EVENTS[event];
  const lines = detailLines(details);
  const footer = 'You receive this mail because this address is a notification recipient of the account.';
  const text = [`Hello ${recipient.email_owner},`, '', sentence, '', ...lines.map(([k, v]) => `${k}: ${v}`), '', footer].join('\n');
  const rows = lines.map(([k, v]) => `<tr><th align="left">${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join('');
  const html =
    `<p>Hello ${escapeHtml(recipient.email_owner)},</p><p>${escapeHtml(sentence)}</p>` +
    (rows ? `<table cellpadding="4">${rows}</table>` : '') +
    `<p style="color:#666;font-size:12px">${escapeHtml(footer)}</p>`;
  return {
    from: systemFrom(config),
    to: recipient.email_address,
    subject: `[Campaign API] ${subject}`,
    text,
    html,
    headers: { 'X-Campaign-Event': event, 'Auto-Submitted': 'auto-generated' },
  };
}

/**
 * Queues, for each notification recipient of the account, a short note about the event: one
 * system mail per recipient, written in `trx`, the transaction of the change that causes the
 * event, so the notes exist exactly when the change is committed and a queue worker delivers
 * them (retrying a slow or failing server) without holding the caller. The event also goes to the
 * account's webhook endpoints, with the note's details as its `data`, in the same transaction.
 * Returns how many notes.
 */
export async function enqueueEvent(
  trx: Db,
  deps: Pick<AppDeps, 'config' | 'clock'>,
  userId: number,
  event: EventName,
  details: Record<string, unknown>,
): Promise<number> {
  const recipients = await selectNotificationRecipients(trx, userId).orderBy('id').execute();
  const now = deps.clock.now();
  for (const r of recipients) await enqueueSystemMail(trx, userId, eventMail(deps.config, r, event, details), now);
  await emitEvents(trx, now, [{ userId, type: event, data: details }]);
  return recipients.length;
}
