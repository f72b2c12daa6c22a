/**
 * Hard or soft: one rule for every bounce (docs/bounces.md), whether it arrives as a DSN, a relay's
 * webhook, a report, or as the 5xx answer of the SMTP server at the accept. Hard means the address
 * or its domain does not exist or has moved; everything else (a full mailbox, a refusal as spam
 * or by policy, a blocked sender, a message too large, a system error) is soft, 5xx ones included.
 * The rule is data: the tables below, all matched as plain lower-case text (no regular
 * expression reads the server's answer but `enhancedStatus`, which runs in linear time). This
 * file imports nothing, so the queue can use it too.
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
 * Enhanced status classes that say the address is right and something else failed: the mailbox
 * (5.2.x: disabled, full), the receiving system (5.3.x), the content (5.6.x), security or policy
 * (5.7.x). Under one of them a "user unknown" in the words is a filter's wording, not a fact
 * about the address.
 */
export const SOFT_STATUS_CLASSES: readonly string[] = ['5.2.', '5.3.', '5.6.', '5.7.'];

/**
 * Texts that say the mailbox does not exist or has moved, as mail systems word it (lower case;
 * matched anywhere in the server's answer): Postfix, Exim, Sendmail, qmail, Exchange, Office 365,
 * Gmail, Yahoo, Outlook.com, Domino, Courier, IMail and others.
 */
export const HARD_TEXTS: readonly string[] = [
  'user unknown',
  'unknown user',
  'no such user',
  'no such recipient',
  'no such mailbox',
  'no such person',
  'no such address',
  'no mailbox here by that name',
  'no mailbox by that name',
  'mailbox not found',
  'mailbox does not exist',
  'mailbox unknown',
  'mailbox is not valid',
  'mailbox invalid',
  'requested action not taken: mailbox unavailable',
  'recipient unknown',
  'unknown recipient',
  'recipient not found',
  'recipient does not exist',
  'recipient address rejected: access denied',
  'recipient address rejected: invalid user',
  'recipient address rejected: unknown user',
  'recipient name is not recognized',
  'address not found',
  "address couldn't be found",
  'address could not be found',
  'address does not exist',
  'address unknown',
  'account that you tried to reach does not exist',
  'account does not exist',
  "doesn't have a yahoo",
  "user doesn't have a ",
  'does not have an account',
  'invalid recipient',
  'invalid mailbox',
  'invalid address',
  'invalid final delivery userid',
  'unknown or illegal alias',
  'unknown or illegal user',
  'unknown local part',
  'unknown local-part',
  'user not found',
  'user does not exist',
  "user doesn't exist",
  'not listed in domino directory',
  'not listed in public name & address book',
  'user not exist',
  '5.1.0 address rejected',
  'ディレクトリのリストにありません',
  'is not a valid mailbox',
  'is not a known user',
  'not our customer',
  'no valid recipients',
  'has moved',
  'has been replaced by',
  'no longer available',
  'resolver.adr.recipientnotfound',
  'resolver.adr.exrecipnotfound',
];

/**
 * Texts that say the address exists but cannot take the message: a full mailbox, a disabled or
 * suspended account, a message too large, a relay refused. They win over everything: over
 * HARD_TEXTS and over a hard status code (a "5.1.1 … over quota" is a full mailbox).
 */
export const SOFT_TEXTS: readonly string[] = [
  // the mailbox is full
  'mailbox full',
  'mailbox is full',
  'mailbox has exceeded',
  'mailbox exceeded',
  'mailbox would exceed',
  'mailfolder is full',
  'full mailbox',
  'over quota',
  'over the quota',
  'quota exceeded',
  'exceeded quota',
  'exceeds allowed size',
  'disk quota',
  'disk space',
  'not enough space',
  'enough storage',
  'insufficient storage',
  'exceeded storage',
  'too much mail',
  'too many messages',
  'space has been used up',
  // the account is disabled or suspended
  'mailbox unavailable or access denied',
  'account is disabled',
  'account has been disabled',
  'account is locked',
  'has been suspended',
  'is currently suspended',
  'mailbox is disabled',
  'mailbox disabled',
  'user suspended',
  'inactive user',
  'temporarily inactive',
  'recipient suspend',
  'disabled or discontinued',
  'extended inactivity',
  // the message is too large
  'message too large',
  'message too big',
  'message size exceeds',
  'message length exceeds',
  'exceeds fixed maximum message size',
  'size limit',
  'exceeded maximum inbound message size',
  // the relay was refused
  'relay access denied',
  'relaying denied',
  'relay not permitted',
  'not permitted to relay',
  'insecure mail relay',
  // a name server that did not answer
  'host not found, try again',
];

/**
 * Texts of a refusal of the message or its sender, or of a failure on the way: spam, a blocked
 * sender or network, a policy, too many messages or connections, a loop, a system or DNS error
 * that may pass. They win over a hard status code (a "550 5.1.1 … has sent to too many
 * recipients" is a rate limit) but not over HARD_TEXTS: a "user unknown" said with them still
 * says the address does not exist.
 */
export const REFUSAL_TEXTS: readonly string[] = [
  'spam',
  'blacklist',
  'blocklist',
  'block list',
  'black list',
  ' is listed',
  'blocked',
  'reputation',
  'unsolicited',
  'policy',
  'not authorized',
  'not permitted',
  'refused due to recipient preferences',
  'recipient is only accepting mail from',
  'not accepting mail with',
  'not accepting any mail',
  'rejected by the recipient',
  'virus',
  'content rejected',
  'message content',
  'dmarc',
  'too many',
  'rate limit',
  'throttl',
  'try again',
  'temporarily',
  'loop',
  'hop count exceeded',
  'too many hops',
  'system error',
  'internal error',
  'insufficient system',
  'configuration error',
  'local error',
  'service currently unavailable',
  'malformed or unexpected name server reply',
  'connection timed out',
  'connection refused',
  'procmail',
  "couldn't create",
];

/**
 * Where the answer was given after the message's data (not at `RCPT TO`): the server accepted the
 * recipient, so the address exists, and a "user unknown" there is how a content or sender filter
 * words its refusal (as the Japanese mobile carriers do). A hard text then does not make the
 * bounce hard; a hard status code (5.1.1) still does.
 */
export const AFTER_DATA_TEXTS: readonly string[] = [
  'after end of data',
  'after data',
  'end of data command',
  'in reply to data command',
  '>>> data',
  'smtp command data',
  'step: data send',
  'for text command',
];

/** Where the answer was given at `MAIL FROM`: the sender was refused, whatever the words. */
export const AT_MAIL_TEXTS: readonly string[] = ['after mail from', 'in reply to mail from command', '>>> mail from', 'smtp command mail'];

/** Where the answer was given at `RCPT TO`: the server refused the recipient itself. */
export const AT_RCPT_TEXTS: readonly string[] = ['rcpt to', 'rcpt command', 'rcpt_to', 'smtp:rcpt', 'smtp command rcpt'];

/**
 * Texts that say the recipient's domain does not exist or takes no mail (no such host, no MX, a
 * null MX). A content filter never words a refusal so, so neither a status of
 * SOFT_STATUS_CLASSES nor an unknown place in the dialogue makes them soft.
 */
export const HARD_DOMAIN_TEXTS: readonly string[] = [
  'unrouteable address',
  'unroutable address',
  'host or domain name not found',
  'host or domain not found',
  'domain not found',
  'no such domain',
  'host not found',
  'host unknown',
  'unknown host',
  'domain does not exist',
  'domain is not reachable',
  'domain must exist',
  'domain may not exist',
  'name or service not known',
  'no mx record',
  'null mx',
  'nullmx',
  'does not accept mail',
  'indicated no smtp service',
  'name service error',
];

/**
 * Texts of an answer that reads like "user unknown" but is a filter's refusal: au (KDDI) answers
 * "550 : User unknown", naming no address, to a message its customer's reception filter refuses.
 */
export const FILTER_TEXTS: readonly string[] = ['550 : user unknown', '550: : user unknown'];

/**
 * The first enhanced status code (`x.y.z`, RFC 3463: class 2, 4 or 5, subject 0 to 7) in a text,
 * or null. A version number (`Exim 4.96.2`) or an address (`192.0.2.1`) is none.
 */
export function enhancedStatus(text: string | null | undefined): string | null {
  if (!text) return null;
  const m = /(?:^|[^\d.])([245])\.([0-7])\.(\d{1,3})(?![\d.]*\d)/.exec(text);
  return m ? `${m[1]}.${Number(m[2])}.${Number(m[3])}` : null;
}

/** Whether `words` (lower case, blanks collapsed) holds any of `texts`. */
const holds = (words: string, texts: readonly string[]) => texts.some((t) => words.includes(t));

/** Lower case, each run of blanks one space. */
const wordsOf = (text: string | null | undefined) => (text ?? '').toLowerCase().replace(/\s+/g, ' ');

/**
 * Classifies a failure from its enhanced status (`status`, e.g. a DSN's `Status:` field; read from
 * the text when not given), the server's words (`text`) and, optionally, what the report says
 * around them (`context`: where in the SMTP dialogue the answer came):
 *
 * 1. a temporary status (4.x.x, or a 4xx answer without one) is soft;
 * 2. words of SOFT_TEXTS make it soft;
 * 3. an answer to `MAIL FROM` (AT_MAIL_TEXTS) is soft: the sender was refused;
 * 4. a status of HARD_STATUS_CODES makes it hard, unless words of REFUSAL_TEXTS say otherwise;
 * 5. without words of HARD_TEXTS or HARD_DOMAIN_TEXTS, or with words of FILTER_TEXTS, it is soft;
 * 6. with them: hard when the answer came at `RCPT TO` (AT_RCPT_TEXTS); soft when it came after
 *    the data (AFTER_DATA_TEXTS); soft for a mailbox text (not a domain one) under a status of
 *    SOFT_STATUS_CLASSES; else hard.
 */
export function classifyBounce(status: string | null | undefined, text: string | null | undefined, context?: string | null): BounceType {
  // A generic status (5.0.0) says less than the code the server wrote in its answer.
  const given = enhancedStatus(status);
  const code = (given && !given.endsWith('.0.0') ? given : null) ?? enhancedStatus(text) ?? given;
  const words = wordsOf(text);
  if (code?.startsWith('4.')) return 'soft';
  if (!code && /^\s*4\d\d[\s-]/.test(words)) return 'soft';
  if (holds(words, SOFT_TEXTS)) return 'soft';
  const around = `${words} ${wordsOf(context)}`;
  if (holds(around, AT_MAIL_TEXTS) && !holds(around, AT_RCPT_TEXTS)) return 'soft';
  if (code && HARD_STATUS_CODES.includes(code)) return holds(words, REFUSAL_TEXTS) ? 'soft' : 'hard';
  const domain = holds(words, HARD_DOMAIN_TEXTS);
  if ((!domain && !holds(words, HARD_TEXTS)) || holds(words, FILTER_TEXTS)) return 'soft';
  if (holds(around, AT_RCPT_TEXTS)) return 'hard';
  if (holds(around, AFTER_DATA_TEXTS)) return 'soft';
  return !domain && code && SOFT_STATUS_CLASSES.some((c) => code.startsWith(c)) ? 'soft' : 'hard';
}
