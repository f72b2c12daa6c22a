/**
 * The common non-standard bounce texts: what the large mail systems write in a bounce that carries
 * no RFC 3464 delivery-status part (or a text beside one). Data only: each entry recognises its
 * system's text (`detect`), then finds each failed recipient (`recipient`: group 1 the address,
 * group 2, when present, the server's answer that follows it) and, when the answer stands
 * elsewhere, the answer (`reason`: group 1). The answer is then classified by the one rule
 * (`classify.ts`).
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

/** An address inside a regular expression: no blanks, brackets, quotes or parentheses. */
const ADDR = String.raw`[^\s<>()\[\]"',;:]+@[^\s<>()\[\]"',;:]+[^\s<>()\[\]"',;:.]`;

/** The very end of the text (`$` means a line end under the `m` flag). */
const END = String.raw`(?![\s\S])`;

export const BOUNCE_TEXTS: readonly BounceText[] = [
  {
    system: 'qmail',
    detect: /This is the qmail-send program|I'm afraid I wasn't able to deliver your message/i,
    recipient: new RegExp(String.raw`^<(${ADDR})>:\s*\n([\s\S]*?)(?=\n\s*\n|\n<|\n--- |\s*${END})`, 'gm'),
  },
  {
    system: 'Postfix (plain text)',
    detect: /This is the mail system at host|Undelivered Mail Returned to Sender/i,
    recipient: new RegExp(String.raw`^<(${ADDR})>(?:\s*\(expanded from <[^>]*>\))?:\s*([\s\S]*?)(?=\n\s*\n|\s*${END})`, 'gm'),
  },
  {
    system: 'Exim',
    detect: /This message was created automatically by mail delivery software/i,
    recipient: new RegExp(String.raw`^\s{2}(${ADDR})\s*\n((?:\s{4}.*\n?)*)`, 'gm'),
  },
  {
    system: 'Sendmail',
    detect: /The following addresses had permanent fatal errors|----- Transcript of session follows -----/i,
    recipient: new RegExp(String.raw`^<?(${ADDR})>?\s*\n\s*\(reason:\s*([^)\n]*)\)`, 'gm'),
  },
  {
    system: 'Exchange / Office 365',
    detect: /Delivery has failed to these recipients or groups|Your message to .* couldn't be delivered/i,
    recipient: new RegExp(String.raw`(?:recipients or groups:\s*\n\s*(?:.*[(<\[])?|Your message to\s+)(${ADDR})`, 'g'),
    reason: /Remote Server returned '([^']+)'|(\b[45]\d\d[ -][245]\.\d{1,3}\.\d{1,3}\b[^\n]*)/,
  },
  {
    system: 'Gmail',
    detect:
      /Delivery to the following recipient failed permanently|Your message wasn't delivered to|Address not found|Message not delivered/i,
    recipient: new RegExp(String.raw`(?:failed permanently:\s*\n\s*|wasn't delivered to\s+)<?(${ADDR})>?`, 'g'),
    reason: /The response (?:from the remote server )?was:\s*\n\s*([^\n]+)|(\b[45]\d\d[ -][245]\.\d{1,3}\.\d{1,3}\b[^\n]*)/,
  },
  {
    system: 'Yahoo',
    detect: /Sorry, we were unable to deliver your message to the following address/i,
    recipient: new RegExp(String.raw`^<(${ADDR})>:\s*\n([\s\S]*?)(?=\n\s*\n|\n--- |\s*${END})`, 'gm'),
    reason: /Remote host said:\s*([^\n]+)/,
  },
];

/** Where a text bounce quotes the original message's headers: its `Message-ID` line. */
export const QUOTED_MESSAGE_ID = /^\s*Message-ID:\s*(<[^>\s]+>)/im;
/** Where a text bounce quotes the original message's envelope sender (our VERP address). */
export const QUOTED_RETURN_PATH = /^\s*Return-Path:\s*<([^>\s]+)>/im;
