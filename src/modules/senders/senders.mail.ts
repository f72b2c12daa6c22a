import { createHash } from 'node:crypto';
import type { Config } from '../../config.js';
import { escapeHtml } from '../../delivery/placeholders.js';
import type { MailMessage } from '../../delivery/transport.js';
import { systemFrom } from '../../delivery/transports.js';
import { createTokens } from '../../util/tokens.js';
import type { SenderRow } from './senders.schema.js';

const PURPOSE = 'sender-verify';
/** How long a verification link works. */
export const VERIFY_TTL_SECONDS = 7 * 24 * 60 * 60;

/** What the signed token carries: the sender id and a tag of the address the link was mailed to. */
interface VerifyPayload {
  s: number;
  e: string;
}

/**
 * A short tag of the address: a link mailed to an old `from_email` must not verify a new one,
 * and the token (readable, only signed) need not spell out the address.
 */
function emailTag(email: string): string {
  return createHash('sha256').update(email.trim().toLowerCase()).digest('base64url').slice(0, 16);
}

/** The link mailed to the sender's address: `{PUBLIC_URL}/sender/verify?token=…` (signed, expiring). */
export function verificationLink(config: Pick<Config, 'appSecret' | 'publicUrl'>, sender: Pick<SenderRow, 'id' | 'from_email'>): string {
  const payload: VerifyPayload = { s: sender.id, e: emailTag(sender.from_email) };
  const token = createTokens(config.appSecret).sign(PURPOSE, payload, { expiresInSeconds: VERIFY_TTL_SECONDS });
  return `${config.publicUrl}/sender/verify?token=${encodeURIComponent(token)}`;
}

/** The sender id a genuine, unexpired link names, with a check for the address it was mailed to. */
export function readVerificationToken(appSecret: string, token: unknown): { senderId: number; matches: (email: string) => boolean } | null {
  const p = createTokens(appSecret).verify<VerifyPayload>(PURPOSE, token);
  if (!p || !Number.isInteger(p.s) || typeof p.e !== 'string') return null;
  return { senderId: p.s, matches: (email) => emailTag(email) === p.e };
}

/** The verification mail for a sender (text and HTML, every value escaped in the HTML). */
export function verificationMail(config: Pick<Config, 'appSecret' | 'publicUrl' | 'dkim'>, sender: SenderRow): MailMessage {
  const link = verificationLink(config, sender);
  const days = VERIFY_TTL_SECONDS / 86_400;
  const text = [
    `Hello ${sender.from_name},`,
    '',
    `Please confirm that ${sender.from_email} may send campaigns as "${sender.nickname}" by opening this link:`,
    '',
    link,
    '',
    `The link works for ${days} days. If you did not ask for this, you can ignore this mail.`,
  ].join('\n');
  const html =
    `<p>Hello ${escapeHtml(sender.from_name)},</p>` +
    `<p>Please confirm that <b>${escapeHtml(sender.from_email)}</b> may send campaigns as "${escapeHtml(sender.nickname)}":</p>` +
    `<p><a href="${escapeHtml(link)}">Verify this sender</a></p>` +
    `<p>The link works for ${days} days. If you did not ask for this, you can ignore this mail.</p>`;
  return { from: systemFrom(config), to: sender.from_email, subject: 'Verify your sender address', text, html };
}
