/**
 * Reads one raw RFC 5322 message that came back (to the inbound route or the SMTP listener): a
 * delivery status notification (RFC 3464), an abuse report (ARF, RFC 5965), or a bounce in one of
 * the common non-standard texts (`bounce-texts.ts`). The MIME structure is mailparser's: the
 * `message/delivery-status`, `message/feedback-report` and returned-message parts are its
 * attachments; only the fields inside those parts (RFC 822-style `Name: value` lines) are read here.
 */
import { createHash } from 'node:crypto';
import { MailParser, simpleParser, type AddressObject, type Attachment, type ParsedMail } from 'mailparser';
import { classifyBounce, type BounceType } from '../delivery/bounce-classes.js';
import { AppError } from '../http/errors.js';
import { BOUNCE_TEXTS, QUOTED_MESSAGE_ID, QUOTED_RETURN_PATH } from './bounce-texts.js';
import type { InboundEvent, InboundSource } from './intake.js';

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

/** What a raw message reports. */
export interface InboundReport {
  /** `ignored`: no failure (a DSN whose action is delayed, delivered, relayed or expanded), or nothing recognised. */
  kind: 'bounce' | 'complaint' | 'ignored';
  /** Whom it is about: the failed recipients of a bounce, the complaining one, or (ignored) any named. */
  recipients: ReportedRecipient[];
  /** Addresses that may carry our VERP token, strongest first. */
  verp: string[];
  /** The returned message's `Message-ID`, when the report carries it. */
  messageId: string | null;
}

/**
 * The most MIME parts (nested ones included) a message may have. A DSN has four or five, with the
 * returned message's own; the cap keeps deep nesting (1,000 `multipart/mixed` in one another) away
 * from the parser's tree and from the walk of it below.
 */
export const MAX_MIME_PARTS = 100;

/** A message the MIME parser gives up on (too many parts, an oversized header block, …): 422, so a relay does not send it again. */
export class UnreadableMail extends AppError {
  constructor(reason: string) {
    super(422, `The message cannot be read: ${reason}.`);
  }
}

/** What the parser is asked for: no HTML conversions, no link detection (none is read); at most MAX_MIME_PARTS parts. */
const PARSER_OPTIONS = {
  keepDeliveryStatus: true,
  maxChildNodes: MAX_MIME_PARTS,
  skipHtmlToText: true,
  skipTextToHtml: true,
  skipTextLinks: true,
  skipImageLinks: true,
} as const;

const DELIVERY_STATUS = new Set(['message/delivery-status', 'message/global-delivery-status']);
const FEEDBACK_REPORT = 'message/feedback-report';
const RETURNED = new Set(['message/rfc822', 'text/rfc822-headers', 'message/global', 'message/global-headers']);
/** Feedback types that are no complaint: a "this is not spam" report, a DMARC/DKIM failure report. */
const NOT_COMPLAINTS = new Set(['not-spam', 'auth-failure']);

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
      if (colon <= 0) continue;
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

/** The header fields of a returned message or header part: its first group of fields. */
function returnedHeaders(part: Attachment | undefined): Map<string, string> {
  if (!part) return new Map();
  const text = part.content.toString('utf8');
  const end = text.search(/\r?\n\r?\n/);
  return fieldGroups(end < 0 ? text : text.slice(0, end))[0] ?? new Map();
}

/** Runs the MIME parser; its failures (all of them caused by the message) become UnreadableMail. */
async function readMime<T>(parse: () => Promise<T>): Promise<T> {
  try {
    return await parse();
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new UnreadableMail(/child nodes/i.test(message) ? `it has more than ${MAX_MIME_PARTS} MIME parts` : message.replace(/\.$/, ''));
  }
}

/** A node of mailparser's MIME tree (its internal shape: `headers` and `children`; `showMeta` marks an embedded message's root). */
interface TreeNode {
  headers?: Map<string, unknown>;
  children?: TreeNode[];
  showMeta?: boolean;
}

/** A header value of mailparser's tree as text: an address header's first address, else the text. */
function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  const address = value as AddressObject | undefined;
  return address?.value?.[0]?.address ?? address?.text;
}

/**
 * The headers of a returned message sent inline (`message/rfc822` with `Content-Disposition:
 * inline`, as RFC 5965's own example does): mailparser parses such a part as an embedded message
 * and gives no attachment for it, so its headers are read from the parser's MIME tree (the
 * embedded root is the node it marks `showMeta`). Empty when there is none.
 */
async function inlineReturnedHeaders(raw: Buffer | string): Promise<Map<string, string>> {
  const parser = new MailParser(PARSER_OPTIONS);
  parser.on('data', (d: { type: string; content?: NodeJS.ReadableStream; release?: () => void }) => {
    if (d.type !== 'attachment') return;
    d.content?.on('end', () => d.release?.());
    d.content?.resume();
  });
  await readMime(
    () =>
      new Promise<void>((resolve, reject) => {
        parser.on('end', resolve);
        parser.on('error', reject);
        parser.end(raw);
      }),
  );
  const find = (node: TreeNode | undefined): TreeNode | undefined =>
    !node ? undefined : node.showMeta && node.headers ? node : (node.children ?? []).map(find).find(Boolean);
  const headers = find((parser as unknown as { tree?: TreeNode }).tree)?.headers;
  const out = new Map<string, string>();
  for (const name of ['message-id', 'return-path', 'to']) {
    const v = headerText(headers?.get(name));
    if (v) out.set(name, v);
  }
  return out;
}

/** `rfc822; a@b.example` → `a@b.example` (the address type dropped); null when empty. */
function typedAddress(value: string | undefined): string | null {
  if (!value) return null;
  const semi = value.indexOf(';');
  const address = (semi >= 0 ? value.slice(semi + 1) : value).trim().replace(/^<|>$/g, '');
  return address === '' ? null : address;
}

/** `smtp; 550 5.1.1 …` → `550 5.1.1 …`. */
function diagnostic(value: string | undefined): string | null {
  if (!value) return null;
  const semi = value.indexOf(';');
  const text = (semi >= 0 && semi < 20 ? value.slice(semi + 1) : value).trim();
  return text === '' ? null : text.slice(0, 1000);
}

/** The addresses of an address header of the parsed message. */
function addressesOf(value: AddressObject | AddressObject[] | undefined): string[] {
  const list = Array.isArray(value) ? value : value ? [value] : [];
  return list.flatMap((v) => v.value.flatMap((a) => (a.address ? [a.address] : [])));
}

/** The values of a plain header (`Delivered-To`, `X-Original-To`, …), one or several. */
function headerValues(mail: ParsedMail, name: string): string[] {
  const v = mail.headers.get(name);
  if (v === undefined || v === null) return [];
  const list = Array.isArray(v) ? v : [v];
  return list.flatMap((x) =>
    typeof x === 'string' ? [x] : typeof x === 'object' && x && 'value' in x ? addressesOf(x as AddressObject) : [],
  );
}

/** The recipients of a delivery-status part: failed ones as bounces; the others make the report `ignored`. */
function fromDeliveryStatus(part: Attachment): { failed: ReportedRecipient[]; other: ReportedRecipient[] } {
  const groups = fieldGroups(part.content.toString('utf8'));
  const failed: ReportedRecipient[] = [];
  const other: ReportedRecipient[] = [];
  // The first group is about the message (Reporting-MTA, …); the others are one per recipient.
  for (const g of groups.slice(1)) {
    const action = (g.get('action') ?? '').toLowerCase().trim();
    const email = typedAddress(g.get('final-recipient')) ?? typedAddress(g.get('original-recipient'));
    const status = g.get('status')?.trim().split(/\s/)[0] ?? null;
    const reason = diagnostic(g.get('diagnostic-code')) ?? status;
    if (action.startsWith('failed')) failed.push({ email, type: classifyBounce(status, reason), status, reason });
    else if (action !== '' || email) other.push({ email, type: null, status, reason });
  }
  return { failed, other };
}

/** The failed recipients of a non-standard bounce text, by the first entry of the table that recognises it. */
function fromBounceText(subject: string, text: string): ReportedRecipient[] {
  const body = text.replace(/\r\n/g, '\n');
  for (const entry of BOUNCE_TEXTS) {
    if (!entry.detect.test(`${subject}\n${body}`)) continue;
    const found: ReportedRecipient[] = [];
    const seen = new Set<string>();
    const elsewhere = entry.reason?.exec(body);
    const shared = elsewhere ? (elsewhere[1] ?? elsewhere[2] ?? '').trim() : '';
    for (const m of body.matchAll(entry.recipient)) {
      const email = m[1];
      if (seen.has(email.toLowerCase())) continue;
      seen.add(email.toLowerCase());
      const reason = ((m[2] ?? '').replace(/\s+/g, ' ').trim() || shared || null)?.slice(0, 1000) ?? null;
      found.push({ email, type: classifyBounce(null, reason), status: null, reason });
    }
    if (found.length > 0) return found;
  }
  return [];
}

/**
 * Parses one raw message. `envelopeTo` are the SMTP envelope recipients when it came through the
 * listener: the VERP address it was sent to, the strongest name of the message. Throws
 * UnreadableMail when the MIME parser gives up on it.
 */
export async function parseInboundMail(raw: Buffer | string, envelopeTo: readonly string[] = []): Promise<InboundReport> {
  const mail = await readMime(() => simpleParser(raw, PARSER_OPTIONS));
  const attachments = mail.attachments ?? [];
  const status = attachments.find((a) => DELIVERY_STATUS.has(a.contentType));
  const feedback = attachments.find((a) => a.contentType === FEEDBACK_REPORT);
  const returned = attachments.find((a) => RETURNED.has(a.contentType));
  const isReport = /^multipart\/report/i.test(
    String(mail.headers.get('content-type') && (mail.headers.get('content-type') as { value?: string }).value),
  );
  const original = returned || !isReport ? returnedHeaders(returned) : await inlineReturnedHeaders(raw);
  const text = mail.text ?? '';
  const verp = [
    ...envelopeTo,
    ...['delivered-to', 'x-original-to', 'envelope-to', 'x-envelope-to'].flatMap((h) => headerValues(mail, h)),
    ...addressesOf(mail.to),
    ...(original.get('return-path') ? [original.get('return-path')!] : []),
  ];
  let messageId = original.get('message-id') ?? null;

  if (feedback) {
    const fields = fieldGroups(feedback.content.toString('utf8'))[0] ?? new Map<string, string>();
    const type = (fields.get('feedback-type') ?? 'abuse').toLowerCase().trim();
    // `[^<>]`: each `<` of a run of them is not read again to the end of the header.
    const email =
      typedAddress(fields.get('original-rcpt-to')) ?? typedAddress(original.get('to')?.match(/<([^<>]+)>/)?.[1] ?? original.get('to'));
    if (fields.get('original-mail-from')) verp.push(fields.get('original-mail-from')!);
    const recipients = [{ email, type: null, status: null, reason: `feedback-type: ${type}` }];
    return { kind: NOT_COMPLAINTS.has(type) ? 'ignored' : 'complaint', recipients, verp: clean(verp), messageId };
  }
  if (status) {
    const { failed, other } = fromDeliveryStatus(status);
    if (failed.length > 0) return { kind: 'bounce', recipients: failed, verp: clean(verp), messageId };
    return { kind: 'ignored', recipients: other, verp: clean(verp), messageId };
  }
  const failed = fromBounceText(mail.subject ?? '', text);
  if (failed.length > 0) {
    // A text bounce quotes the original's headers in its text when it does not attach them.
    messageId ??= QUOTED_MESSAGE_ID.exec(text)?.[1] ?? null;
    const quotedFrom = QUOTED_RETURN_PATH.exec(text)?.[1];
    if (quotedFrom) verp.push(quotedFrom);
    return { kind: 'bounce', recipients: failed, verp: clean(verp), messageId };
  }
  return { kind: 'ignored', recipients: [], verp: clean(verp), messageId };
}

/** Trimmed, without angle brackets, each once, in order. */
function clean(addresses: string[]): string[] {
  const out: string[] = [];
  for (const a of addresses) {
    const v = a.trim().replace(/^<|>$/g, '');
    if (v !== '' && !out.includes(v)) out.push(v);
  }
  return out;
}

/**
 * The events of a report, one per recipient (none when ignored): each keyed by a hash of the raw
 * message and the recipient's place in it, so the same mail received twice (by the route, the
 * listener, or both) counts once.
 */
export function reportEvents(report: InboundReport, raw: Buffer | string, source: InboundSource): InboundEvent[] {
  if (report.kind === 'ignored') return [];
  const hash = createHash('sha256').update(raw).digest('hex');
  const kind = report.kind;
  return report.recipients.map((r, i) => ({
    source,
    kind,
    type: kind === 'complaint' ? null : r.type,
    email: r.email,
    // Every candidate is tried: the first genuine token wins (see takeInEvent).
    verp: report.verp.find((v) => /\+[0-9a-z]{1,12}-[0-9a-f]{16}@/i.test(v)) ?? null,
    messageId: report.messageId,
    reason: r.reason,
    eventKey: `mail:${hash}:${i}`,
  }));
}
