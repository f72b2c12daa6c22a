/**
 * Hard or soft: one rule for every bounce (docs/bounces.md), whether it arrives as a DSN, a relay's
 * webhook, a report, or as the 5xx answer of the SMTP server at the accept. Hard means the address
 * or its domain does not exist or has moved; everything else (a full mailbox, a refusal as spam
 * or by policy, a blocked sender, a message too large, a system error) is soft, 5xx ones included.
 * The rule is data: the tables below. This file imports nothing, so the queue can use it too.
 */

export type BounceType = 'hard' | 'soft';

/** Enhanced status codes (RFC 3463) that say the address or domain does not exist or has moved. */
export const HARD_STATUS_CODES: readonly string[] = [
  '5.1.1', // bad destination mailbox address
  '5.1.2', // bad destination system address (no such domain)
  '5.1.6', // destination mailbox has moved, no forwarding address
  '5.1.10', // recipient address has a null MX (RFC 7505)
  '5.4.4', // unable to route (no MX, no A)
];

/**
 * Texts that say the same, as mail systems word it (lower case; matched anywhere in the server's
 * answer). Postfix, Exim, Sendmail, qmail, Exchange, Gmail, Yahoo, Outlook.com and others.
 */
export const HARD_TEXTS: readonly string[] = [
  'user unknown',
  'unknown user',
  'no such user',
  'no such recipient',
  'no such mailbox',
  'no mailbox here by that name',
  'mailbox not found',
  'mailbox does not exist',
  'mailbox unknown',
  'recipient unknown',
  'unknown recipient',
  'recipient not found',
  'recipient does not exist',
  'address not found',
  "address couldn't be found",
  'address could not be found',
  'address does not exist',
  'account that you tried to reach does not exist',
  'account does not exist',
  "doesn't have a yahoo",
  'does not have an account',
  'invalid recipient',
  'invalid mailbox',
  'unknown or illegal alias',
  'user not found',
  'user does not exist',
  "user doesn't exist",
  'no such person',
  'not our customer',
  'unrouteable address',
  'host or domain name not found',
  'host or domain not found',
  'domain not found',
  'host not found',
  'domain does not exist',
  'no mx record',
  'null mx',
  'name service error',
  'has moved',
  'no longer available',
  'resolver.adr.recipientnotfound',
  'resolver.adr.exrecipnotfound',
];

/** The first enhanced status code (`x.y.z`) in a text, or null. */
export function enhancedStatus(text: string | null | undefined): string | null {
  if (!text) return null;
  const m = /(?:^|[^\d.])([245])\.(\d{1,3})\.(\d{1,3})(?![\d.]*\d)/.exec(text);
  return m ? `${m[1]}.${Number(m[2])}.${Number(m[3])}` : null;
}

/**
 * Classifies a failure from its enhanced status (`status`, e.g. a DSN's `Status:` field; read from
 * the text when not given) and the server's words (`text`): a temporary status (4.x.x) is soft; a
 * status of HARD_STATUS_CODES is hard; else any text of HARD_TEXTS makes it hard; anything else is
 * soft.
 */
export function classifyBounce(status: string | null | undefined, text: string | null | undefined): BounceType {
  const code = enhancedStatus(status) ?? enhancedStatus(text);
  if (code?.startsWith('4.')) return 'soft';
  if (code && HARD_STATUS_CODES.includes(code)) return 'hard';
  const words = (text ?? '').toLowerCase().replace(/\s+/g, ' ');
  if (!code && /^\s*4\d\d[\s-]/.test(words)) return 'soft';
  return HARD_TEXTS.some((t) => words.includes(t)) ? 'hard' : 'soft';
}
