/**
 * The common non-standard bounce texts: what the large mail systems write in a bounce that carries
 * no RFC 3464 delivery-status part (or a text beside one). Data only, read by `text-bounce.ts`:
 *
 * - how a bounce is known (its sender, its subject) and where the returned message starts in it;
 * - BOUNCE_TEXTS: each system whose text needs its own reading recognises it (`detect`), then
 *   finds each failed recipient (`recipient`: group 1 the address, group 2, when present, the
 *   server's answer that follows it) and, when the answer stands elsewhere, the answer (`reason`:
 *   group 1 or 2);
 * - RECIPIENT_LINE: how the others (Exim, Courier, Exchange 2003, Domino, Notes, IMail, OpenSMTPD,
 *   GMX, mail.ru, Zoho, m-FILTER, McAfee, …) name a failed recipient: an address at the start of a
 *   line, after at most a short label.
 *
 * The answer is then classified by the one rule (`src/delivery/bounce-classes.ts`).
 *
 * Every pattern here reads untrusted text (anyone can send mail to the bounce address), so each
 * runs in linear time: no two quantifiers can share the same characters (a run of blanks is read
 * by one of them only, an address has one `@` before its domain), an answer ends at a blank line
 * found by a lookahead that reads one line's blanks, and line patterns are anchored at a line's
 * start. test/inbound/regex-linear.test.ts holds every pattern of the inbound code to that with
 * 100 KB adversarial texts.
 */

export interface BounceText {
  /** The mail system, for the docs and the tests. */
  system: string;
  /** Recognises its text (in the subject and the text part). */
  detect: RegExp;
  /** Each failed recipient (global): group 1 the address, group 2 the answer that follows it (optional). */
  recipient: RegExp;
  /** The answer, when it is not right after the address: group 1 or 2. */
  reason?: RegExp;
}

/**
 * An address inside a regular expression: no blanks, brackets, quotes or parentheses, and no `@`
 * before the first one (else each `@` of `a@a@a@…` is tried as the separator: quadratic).
 */
const ADDR = String.raw`[^\s<>()\[\]"',;:@]+@[^\s<>()\[\]"',;:]+[^\s<>()\[\]"',;:.]`;

/** Blanks up to and including the first line end (`\s*\n` would try every line end of a run in turn). */
const TO_EOL = String.raw`[^\S\n]*\n`;

/**
 * Where a server's answer after the address ends: a blank line, or the end of the text. Trailing
 * blanks before the end stay in the answer (it is trimmed): `\s*$` here would read the rest of a
 * run of blanks at each of its characters.
 */
const PARAGRAPH_END = String.raw`\n[^\S\n]*\n|(?![\s\S])`;

export const BOUNCE_TEXTS: readonly BounceText[] = [
  {
    system: 'qmail',
    detect: /This is the qmail-send program|I'm afraid I wasn't able to deliver your message/i,
    recipient: new RegExp(String.raw`^<(${ADDR})>:\s*\n([\s\S]*?)(?=${PARAGRAPH_END}|\n<|\n--- )`, 'gm'),
  },
  {
    system: 'Postfix (plain text)',
    detect: /This is the mail system at host|Undelivered Mail Returned to Sender/i,
    recipient: new RegExp(String.raw`^<(${ADDR})>(?:\s*\(expanded from <[^>]*>\))?:\s*([\s\S]*?)(?=${PARAGRAPH_END})`, 'gm'),
  },
  {
    system: 'Sendmail',
    detect: /The following addresses had permanent fatal errors|----- Transcript of session follows -----/i,
    // The answer's first character is no blank, so `\s*` before it alone reads the blanks.
    recipient: new RegExp(String.raw`^<?(${ADDR})>?${TO_EOL}\s*\(reason:\s*([^)\s][^)\n]*)?\)`, 'gm'),
  },
  {
    system: 'Exchange / Office 365',
    // `.*` stops at the next "Your message to": a line of them is read once, not once from each.
    detect: /Delivery has failed to these recipients or groups|Your message to (?:(?!Your message to ).)* couldn't be delivered/i,
    // A display name before the address starts with no blank, so the blanks before it are read once.
    recipient: new RegExp(String.raw`(?:recipients or groups:${TO_EOL}\s*(?:(?:\S.*)?[(<\[])?|Your message to\s+)(${ADDR})`, 'g'),
    reason: /Remote Server returned '([^']+)'|(\b[45]\d\d[ -][245]\.\d{1,3}\.\d{1,3}\b[^\n]*)/,
  },
  {
    system: 'Gmail',
    detect:
      /Delivery to the following recipient failed permanently|Your message wasn't delivered to|Address not found|Message not delivered/i,
    recipient: new RegExp(String.raw`(?:failed permanently:${TO_EOL}\s*|wasn't delivered to\s+)<?(${ADDR})>?`, 'g'),
    reason: /The response (?:from the remote server )?was:[^\S\n]*\n\s*([^\n]+)|(\b[45]\d\d[ -][245]\.\d{1,3}\.\d{1,3}\b[^\n]*)/,
  },
  {
    system: 'au (KDDI)',
    detect: /Could not be delivered to: </i,
    recipient: new RegExp(String.raw`Could not be delivered to: <(${ADDR})>`, 'g'),
  },
  {
    system: 'fml (mailing list manager)',
    detect: /You are not a member of this mailing list|Duplicated Message-ID in </i,
    recipient: new RegExp(String.raw`(?:of this mailing list|Duplicated Message-ID in) <(${ADDR})>`, 'gi'),
  },
  {
    system: 'Yahoo',
    detect: /Sorry, we were unable to deliver your message to the following address/i,
    recipient: new RegExp(String.raw`^<(${ADDR})>:\s*\n([\s\S]*?)(?=${PARAGRAPH_END}|\n--- )`, 'gm'),
    reason: /Remote host said:\s*([^\n]+)/,
  },
];

/**
 * A sender that writes bounces: `MAILER-DAEMON`, `postmaster`, a "Mail Delivery System" (checked
 * against the `From` header, its name and address).
 */
export const BOUNCE_SENDER = /mailer-daemon|post_?master|mail delivery|mail\.delivery|mail deliver system|ndr administrator/i;

/** A subject that names a bounce, in the words of the large mail systems. */
export const BOUNCE_SUBJECT =
  /undeliver|undelivered|returned mail|returning message|delivery (?:status notification|failure|failed|has failed|notification)|failure notice|failed delivery|failure delivery|mail delivery failed|mail system error|could not be delivered|delivery problem|non remis|non-remis|unzustellbar|nicht zustellbar|error sending your mail|mail failed|mail failure|delivery failure|メールエラー|配信できません/i;

/** A subject that names a warning about a delay (no failure yet): such a text bounce is `ignored`, as a DSN whose action is `delayed`. */
export const DELAY_SUBJECT =
  /\(delay\)|delivery delayed|delayed mail|delivery has been delayed|warning: could not send|could not send mail for past|warning: message \S+ delayed|delivery status notification: (?:warning|delayed)/i;

/**
 * Where the copy of the returned message starts in a bounce text (the report is what comes
 * before): the separator lines the mail systems write, or the first line of its headers.
 */
export const RETURNED_MESSAGE =
  /^[^\S\n]*(?:[-=*|]+[^\S\n]*)?(?:original message|returned message|unsent message|message text follows|this is a copy of|the header of the original|below this line is a copy|below is a copy of the original|included is a copy of the message|original mail|original message follows|message headers follow|the original message was:)|^(?:Received|Return-Path|Message-ID|DKIM-Signature|X-Received|X-Google-Smtp-Source|ARC-Seal):[^\S\n]/im;

/**
 * A line that names a failed recipient: its address at the start (after blanks), alone or in
 * angle brackets or quotes, or after a short label (`*`, a reply code, `Recipient:`,
 * `Unknown user:`, `Could not be delivered to:`, …). Group 1 the address, group 2 the rest of the
 * line. The label's words are one alternation, so a line is tried once at its start; the `>` of a
 * quoted (forwarded) bounce are read before it, each with the blanks after it.
 */
export const RECIPIENT_LINE = new RegExp(
  String.raw`^[^\S\n]*(?:>[^\S\n]*)*(?:(?:\*|[45]\d\d|rcpt to:)[^\S\n]*|(?:recipient(?: address)?|addressed to|delivery failed|failed recipient|unknown user|invalid final delivery userid|user mailbox exceeds allowed size|delivery failed \d+ attempts|could not be delivered to|unable to deliver message to|undeliverable to|did not reach the following recipient|original-recipient|final-recipient|user's mailbox is full)[^\S\n]*(?::[^\S\n]*)?(?:rfc822;[^\S\n]*)?)?["<]?(${ADDR})[">]?([^\n]*)`,
  'gim',
);

// A quoted header line may be indented by spaces or tabs; `^\s*` would read a run of blank lines again from each of them.
/** Where a text bounce quotes the original message's headers: its `Message-ID` line. */
export const QUOTED_MESSAGE_ID = /^[ \t]*Message-ID:\s*(<[^>\s]+>)/im;
/** Where a text bounce quotes the original message's `To` line (group 1: the rest of the line). */
export const QUOTED_TO = /^[ \t]*To:[ \t]*([^\n]*)/im;
/** Where a text bounce quotes the original message's envelope sender (our VERP address). */
export const QUOTED_RETURN_PATH = /^[ \t]*Return-Path:\s*<([^>\s]+)>/im;
