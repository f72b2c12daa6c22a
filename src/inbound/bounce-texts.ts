/**
 * The common non-standard bounce texts: what the large mail systems write in a bounce that carries
 * no RFC 3464 delivery-status part (or a text beside one). Data only: each entry recognises its
 * system's text (`detect`), then finds each failed recipient (`recipient`: group 1 the address,
 * group 2, when present, the server's answer that follows it) and, when the answer stands
 * elsewhere, the answer (`reason`: group 1). The answer is then classified by the one rule
 * (`classify.ts`).
 *
 * Every pattern here reads untrusted text (anyone can send mail to the bounce address), so each
 * runs in linear time: no two quantifiers can share the same characters (a run of blanks is read
 * by one of them only, an address has one `@` before its domain), and an answer ends at a blank
 * line found by a lookahead that reads one line's blanks. test/inbound/regex-linear.test.ts holds
 * every pattern of the inbound code to that with 100 KB adversarial texts.
 */

export interface BounceText {
  /** The mail system, for the docs and the tests. */
  system: string;
  /** Recognises its text (in the subject and the text part). */
  detect: RegExp;
  /** Each failed recipient (global): group 1 the address, group 2 the answer that follows it (optional). */
  recipient: RegExp;
  /** The answer, when it is not right after the address: group 1. */
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
    system: 'Exim',
    detect: /This message was created automatically by mail delivery software/i,
    recipient: new RegExp(String.raw`^\s{2}(${ADDR})\s*\n((?:\s{4}.*\n?)*)`, 'gm'),
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
    system: 'Yahoo',
    detect: /Sorry, we were unable to deliver your message to the following address/i,
    recipient: new RegExp(String.raw`^<(${ADDR})>:\s*\n([\s\S]*?)(?=${PARAGRAPH_END}|\n--- )`, 'gm'),
    reason: /Remote host said:\s*([^\n]+)/,
  },
];

// A quoted header line may be indented by spaces or tabs; `^\s*` would read a run of blank lines again from each of them.
/** Where a text bounce quotes the original message's headers: its `Message-ID` line. */
export const QUOTED_MESSAGE_ID = /^[ \t]*Message-ID:\s*(<[^>\s]+>)/im;
/** Where a text bounce quotes the original message's envelope sender (our VERP address). */
export const QUOTED_RETURN_PATH = /^[ \t]*Return-Path:\s*<([^>\s]+)>/im;
