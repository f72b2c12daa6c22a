/**
 * Reads a bounce that has no RFC 3464 delivery-status part: the text a mail system writes
 * ("This message was created automatically by mail delivery software…", "Your message did not
 * reach the following recipient(s)…", "Delivery to the following recipient failed
 * permanently…"). The words it reads are data (`bounce-texts.ts`); here is only the order in which
 * they are tried:
 *
 * 1. it is a bounce when its sender or subject says so, when it names its failed recipients
 *    (`X-Failed-Recipients`), or when a system's text of BOUNCE_TEXTS is recognised; a warning
 *    about a delay is no failure (as a DSN whose action is `delayed`);
 * 2. the report is the text before the copy of the returned message;
 * 3. the failed recipients: those of the system's own entry, else the `X-Failed-Recipients`, else
 *    the lines of the report that start with an address (RECIPIENT_LINE), else the returned
 *    message's `To`, else the first address the report names; in these last two, never an
 *    address of the bounce itself (its `From`, its `To`);
 * 4. each recipient's answer: the words after its address (up to a blank line or the next
 *    recipient), else the report.
 */
import { classifyBounce } from '../delivery/bounce-classes.js';
import { BOUNCE_SENDER, BOUNCE_SUBJECT, BOUNCE_TEXTS, DELAY_SUBJECT, RECIPIENT_LINE, RETURNED_MESSAGE } from './bounce-texts.js';
import { MAX_RECIPIENTS, addressesIn, wordsIn, type ReportedRecipient } from './dsn.js';

/** What a bounce text is read from. */
export interface BounceMail {
  subject: string;
  /** The text part(s). */
  text: string;
  /** The `From` header, name and address. */
  from: string;
  /** The bounce's own addresses (`From`, `To`, `Delivered-To`): never a failed recipient. */
  own: readonly string[];
  /** The `X-Failed-Recipients` header's addresses. */
  failedRecipients: readonly string[];
  /** The returned message's `To` addresses, when it is attached or quoted: the recipient of a report that names none. */
  originalTo: readonly string[];
}

/** What a bounce text reports: failed recipients, a delay (no failure yet), or nothing. */
export interface TextReading {
  kind: 'bounce' | 'delay' | 'none';
  recipients: ReportedRecipient[];
}

/** The most of a report read: a bounce's report is a few KB; a longer one is cut, not read in full. */
const MAX_REPORT = 64 * 1024;
/** The most lines after a recipient's address read as its answer. */
const MAX_ANSWER_LINES = 8;

/** The report of a bounce text: what comes before the returned message's copy (bounded). */
function reportOf(text: string): string {
  const body = text.replace(/\r\n?/g, '\n').slice(0, 4 * MAX_REPORT);
  const cut = RETURNED_MESSAGE.exec(body)?.index ?? -1;
  return (cut > 0 ? body.slice(0, cut) : body).slice(0, MAX_REPORT);
}

/** A recipient's address and the words after it. */
interface Named {
  email: string;
  answer: string | null;
}

/** A line of a report that names a recipient. */
interface RecipientLine {
  email: string;
  line: string;
  rest: string;
  start: number;
  end: number;
}

/** The blanks a line starts with. */
const indentOf = (line: string) => line.length - line.trimStart().length;

/**
 * The lines after a recipient's line that are its answer: when that line ends with a colon
 * (announcing it), or for the lines indented deeper than it, up to a blank line or a line that
 * starts with a reply code (the next line of a transcript). Lines at its own depth are its
 * siblings (the other fields of a list of details), not its answer.
 */
function answerLines(recipientLine: string, lines: string[]): string[] {
  const announced = recipientLine.trimEnd().endsWith(':');
  const depth = indentOf(recipientLine);
  const end = lines.findIndex((l) => l.trim() === '' || /^[2-5]\d\d\b/.test(l) || (!announced && indentOf(l) <= depth));
  return end < 0 ? lines : lines.slice(0, end);
}

/**
 * The recipients named by the lines of a report that start with an address, with the words after
 * each: the rest of its line, then the next lines up to a blank one, a reply code at a line's
 * start, or the next recipient (a line naming the same address again continues the answer). In
 * `a@b <c@d>` the address in brackets is the recipient (the other is its name).
 */
function recipientLines(report: string): Named[] {
  const lines: RecipientLine[] = [];
  for (const m of report.matchAll(RECIPIENT_LINE)) {
    if (lines.length >= MAX_RECIPIENTS) break;
    const bracketed = /^\s*<([^<>\s]+@[^<>\s@]+)>/.exec(m[2] ?? '');
    const email = (bracketed?.[1] ?? m[1]).toLowerCase();
    if (lines.at(-1)?.email === email) continue;
    // The separator after the address (`a@b: 550 …`, `<a@b>... User unknown`) is no part of the answer.
    const rest = (bracketed ? m[2].slice(bracketed[0].length) : (m[2] ?? '')).replace(/^[\s:;,.>-]+/, '');
    lines.push({ email, line: m[0], rest, start: m.index, end: m.index + m[0].length });
  }
  const found: Named[] = [];
  for (const [i, line] of lines.entries()) {
    if (found.some((f) => f.email === line.email)) continue;
    const until = lines[i + 1]?.start ?? report.length;
    const next = answerLines(
      line.line,
      report
        .slice(line.end, until)
        .split('\n')
        .slice(1, MAX_ANSWER_LINES + 1),
    );
    found.push({ email: line.email, answer: wordsIn(`${line.rest}\n${next.join('\n')}`) });
  }
  return found;
}

/** The recipients of a system's own entry in BOUNCE_TEXTS, when one recognises the text. */
function fromSystemEntry(subject: string, report: string): Named[] {
  for (const entry of BOUNCE_TEXTS) {
    if (!entry.detect.test(`${subject}\n${report}`)) continue;
    const elsewhere = entry.reason?.exec(report);
    const shared = elsewhere ? wordsIn(elsewhere[1] ?? elsewhere[2] ?? '') : null;
    const found: Named[] = [];
    for (const m of report.matchAll(entry.recipient)) {
      const email = m[1].toLowerCase();
      if (found.some((f) => f.email === email)) continue;
      found.push({ email, answer: wordsIn(m[2] ?? '') ?? shared });
      if (found.length >= MAX_RECIPIENTS) break;
    }
    if (found.length > 0) return found;
  }
  return [];
}

/** Whether the mail is a bounce by its sender, subject, headers or text. */
function isBounce(mail: BounceMail, report: string): boolean {
  if (mail.failedRecipients.length > 0 || BOUNCE_SENDER.test(mail.from) || BOUNCE_SUBJECT.test(mail.subject)) return true;
  return BOUNCE_TEXTS.some((e) => e.detect.test(`${mail.subject}\n${report}`));
}

/** The failed recipients a report names (see the steps above), with the words after each. */
function namedRecipients(mail: BounceMail, report: string): Named[] {
  const own = new Set(mail.own.map((a) => a.toLowerCase()));
  const entry = fromSystemEntry(mail.subject, report);
  if (entry.length > 0) return entry;
  const lines = recipientLines(report);
  const failed = mail.failedRecipients.map((a) => a.toLowerCase()).filter((a) => a.includes('@'));
  if (failed.length > 0) return failed.map((email) => lines.find((l) => l.email === email) ?? { email, answer: null });
  if (lines.length > 0) return lines;
  const named = [...mail.originalTo, ...addressesIn(report, 10)].map((a) => a.toLowerCase()).find((a) => !own.has(a));
  return named ? [{ email: named, answer: null }] : [];
}

/** The most lines of a report kept as the reason when no recipient has words of its own. */
const FOCUS_LINES = 4;

/** The lines of a report from its first reply code on (`550 …`, `5.1.1 …`): the server's answer without the mail system's preamble. */
function focusOf(report: string): string | null {
  const lines = report.split('\n');
  const first = lines.findIndex((l) => /\b[245]\d\d\b|\b[245]\.[0-7]\.\d/.test(l));
  return first < 0 ? null : wordsIn(lines.slice(first, first + FOCUS_LINES).join('\n'));
}

/** Reads a bounce text (see the steps above). */
export function readBounceText(mail: BounceMail): TextReading {
  const report = reportOf(mail.text);
  if (!isBounce(mail, report)) return { kind: 'none', recipients: [] };
  const whole = wordsIn(report);
  const focused = focusOf(report) ?? whole;
  const delay = DELAY_SUBJECT.test(mail.subject);
  const recipients = namedRecipients(mail, report).map(({ email, answer }): ReportedRecipient => {
    // The type from the recipient's own words, else from the whole report; the reason kept is the shorter.
    const type = delay ? null : classifyBounce(null, answer ?? whole, report);
    return { email, type, status: null, reason: answer ?? focused };
  });
  if (recipients.length === 0) return { kind: 'none', recipients };
  return { kind: delay ? 'delay' : 'bounce', recipients };
}
