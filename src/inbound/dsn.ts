/**
 * The fields of a delivery status notification (RFC 3464): the `Name: value` lines of a
 * `message/delivery-status` part, or of a text that carries the same fields without the part (a
 * report whose MIME boundaries are broken, a mail system that writes the fields into its text).
 * Each recipient's group gives its address, action, status and the server's answer.
 */
import { classifyBounce, type BounceType } from '../delivery/bounce-classes.js';

/** One recipient a report is about. */
export interface ReportedRecipient {
  email: string | null;
  /** Bounces only: hard or soft by the one rule; null for a complaint or an ignored report. */
  type: BounceType | null;
  /** The enhanced status (DSN `Status:`), when given. */
  status: string | null;
  /** The server's answer (DSN `Diagnostic-Code:`), the bounce text, or the feedback type. */
  reason: string | null;
}

/** The most recipients read from one report (a DSN names one or a few; each is looked up in the text). */
export const MAX_RECIPIENTS = 100;

/** Actions that report no failure (RFC 3464 §2.3.3): the report is then `ignored`. */
const NO_FAILURE = new Set(['delayed', 'delivered', 'relayed', 'expanded']);

/**
 * The groups of `Name: value` fields of a delivery-status or feedback-report part (RFC 3464 §2.1:
 * groups separated by blank lines; continuation lines folded back). Names in lower case; the first
 * value of a name in a group wins.
 */
export function fieldGroups(text: string): Array<Map<string, string>> {
  const groups: Array<Map<string, string>> = [];
  let group = new Map<string, string>();
  let last: string | null = null;
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '') {
      if (group.size > 0) groups.push(group);
      group = new Map();
      last = null;
    } else if (/^[ \t]/.test(line) && last !== null) {
      group.set(last, `${group.get(last)} ${line.trim()}`);
    } else {
      const colon = line.indexOf(':');
      if (colon <= 0) {
        last = null;
        continue;
      }
      const name = line.slice(0, colon).trim().toLowerCase();
      if (group.has(name)) {
        last = null;
        continue;
      }
      group.set(name, line.slice(colon + 1).trim());
      last = name;
    }
  }
  if (group.size > 0) groups.push(group);
  return groups;
}

/**
 * `rfc822; a@b.example` → `a@b.example` (the address type dropped); a source route
 * (`@relay.example:a@b.example`) dropped too; from a value that is no bare address (a pipe
 * `|/usr/bin/cmd a@b.example`), the first address in it. Null when it names none.
 */
export function typedAddress(value: string | undefined): string | null {
  if (!value) return null;
  const semi = value.indexOf(';');
  let address = (semi >= 0 ? value.slice(semi + 1) : value).trim().replace(/^<|>$/g, '').trim();
  if (address.startsWith('@') && address.includes(':')) address = address.slice(address.lastIndexOf(':') + 1);
  if (address.indexOf('@') <= 0) return null;
  return /[\s|/<>]/.test(address) ? (addressesIn(address, 1)[0] ?? null) : address;
}

const LOCAL_STOP = new Set([...' \t\r\n<>()[]"\',;:@|']);
const DOMAIN_STOP = new Set([...' \t\r\n<>()[]"\',;:@/?=&!*|\\']);

/**
 * The addresses in a text, in order, each once (lower case), found from each `@` by reading its
 * neighbours (no regular expression, so linear on any text: each character is read at most twice).
 */
export function addressesIn(text: string, limit = MAX_RECIPIENTS): string[] {
  const out: string[] = [];
  let at = text.indexOf('@');
  while (at >= 0 && out.length < limit) {
    let start = at;
    while (start > 0 && !LOCAL_STOP.has(text[start - 1])) start--;
    let end = at + 1;
    while (end < text.length && !DOMAIN_STOP.has(text[end])) end++;
    let domain = text.slice(at + 1, end);
    while (domain.endsWith('.')) domain = domain.slice(0, -1);
    const local = text.slice(start, at).replace(/^\.+/, '');
    const address = `${local}@${domain}`.toLowerCase();
    if (local !== '' && domain.includes('.') && !out.includes(address)) out.push(address);
    at = text.indexOf('@', end);
  }
  return out;
}

/** `smtp; 550 5.1.1 …` → `550 5.1.1 …`. */
export function diagnostic(value: string | undefined): string | null {
  if (!value) return null;
  const semi = value.indexOf(';');
  const text = (semi >= 0 && semi < 20 ? value.slice(semi + 1) : value).trim();
  return text === '' ? null : text.slice(0, 1000);
}

/**
 * A recipient group's address: `Final-Recipient`, unless it is a source route
 * (`@relay:user@host`, the receiving system's own routing) and `Original-Recipient` gives the
 * address as it was sent to.
 */
function recipientOf(g: Map<string, string>): string | null {
  const final = typedAddress(g.get('final-recipient'));
  const value = g.get('final-recipient') ?? '';
  const routed = value
    .slice(value.indexOf(';') + 1)
    .trim()
    .replace(/^</, '')
    .startsWith('@');
  return (!final || routed ? typedAddress(g.get('original-recipient')) : null) ?? final;
}

/** A text's words, blanks collapsed (at most 1,000 characters); null when, addresses aside, it holds no word. */
export function wordsIn(text: string): string | null {
  const t = text.replace(/\s+/g, ' ').trim();
  const words = t
    .replace(/<[^<>]*>/g, ' ')
    .split(' ')
    .filter((w) => !w.includes('@'))
    .join(' ');
  return /\p{L}{2}/u.test(words) ? t.slice(0, 1000) : null;
}

/** The recipients of a delivery status report. */
export interface StatusRecipients {
  /** The failed ones (bounces). */
  failed: ReportedRecipient[];
  /** The others (delayed, delivered, relayed, expanded): they make the report `ignored`. */
  other: ReportedRecipient[];
}

/**
 * The recipients of the fields of a delivery status report (`text`: the part, or a text that
 * carries its fields). A group is a recipient's when it names one (`Final-Recipient`, else
 * `Original-Recipient`); the message's own fields may share its group (no blank line between
 * them, as some systems write it). A recipient failed when its `Action` is not one of a
 * delayed, delivered, relayed or expanded message; a group with no `Action` failed unless its
 * status is a success (2.x.x). `context` (the report's text part) tells the rule where the answer
 * came in the SMTP dialogue when the answer itself does not say.
 */
export function statusRecipients(text: string, context = ''): StatusRecipients {
  const failed: ReportedRecipient[] = [];
  const other: ReportedRecipient[] = [];
  for (const g of fieldGroups(text)) {
    if (failed.length + other.length >= MAX_RECIPIENTS) break;
    const email = recipientOf(g);
    if (!email) continue;
    const action = (g.get('action') ?? '')
      .toLowerCase()
      .trim()
      .split(/[\s(;]/)[0];
    const status = /^\d\.\d{1,3}\.\d{1,3}/.exec(g.get('status')?.trim() ?? '')?.[0] ?? null;
    const around = contextOf(context, email);
    // No `Diagnostic-Code`: what the text says about the recipient, else the text itself, else the status.
    const reason = diagnostic(g.get('diagnostic-code')) ?? wordsIn(around) ?? wordsIn(context.slice(0, 4000)) ?? status;
    const succeeded = action === '' && status?.startsWith('2.');
    if (NO_FAILURE.has(action) || succeeded) other.push({ email, type: null, status, reason });
    else failed.push({ email, type: classifyBounce(status, reason, around), status, reason });
  }
  return { failed, other };
}

/** The most places of a recipient's address read in the report's text. */
const MAX_MENTIONS = 3;

/**
 * What the report's text says about one recipient: at each of the first few lines naming its
 * address, that line and the next ones up to a blank line or a line naming another address (where
 * a mail system writes "in reply to RCPT TO command" or the transcript of the dialogue). Empty when
 * the text does not name it.
 */
export function contextOf(text: string, email: string): string {
  if (!text || !email) return '';
  const lower = text.toLowerCase();
  const needle = email.toLowerCase();
  const parts: string[] = [];
  let at = lower.indexOf(needle);
  while (at >= 0 && parts.length < MAX_MENTIONS) {
    const start = lower.lastIndexOf('\n', at) + 1;
    // The line before too: a transcript writes the command (`>>> DATA`) on the line before the answer.
    const before = lower.lastIndexOf('\n', start - 2) + 1;
    const previous = start > 0 ? text.slice(before, start - 1) : '';
    const lines = text.slice(start, start + 2000).split('\n');
    const end = lines.findIndex((l, i) => i > 0 && (l.trim() === '' || (l.includes('@') && !l.toLowerCase().includes(needle))));
    const part = (end < 0 ? lines : lines.slice(0, end)).join('\n');
    parts.push(previous.includes('@') ? part : `${previous}\n${part}`);
    at = lower.indexOf(needle, start + part.length);
  }
  return parts.join('\n');
}
