/**
 * Reads one raw RFC 5322 message that came back (to the inbound route or the SMTP listener): an
 * abuse report (ARF, RFC 5965, or Outlook.com's own), a delivery status notification (RFC 3464,
 * its part or its fields in the text), an Amazon SES notification sent by mail, or a bounce in one
 * of the common non-standard texts (`text-bounce.ts`). The MIME structure is mailparser's
 * (`mime.ts`): the `message/delivery-status`, `message/feedback-report` and returned-message parts
 * are its attachments; only the fields inside those parts (RFC 822-style `Name: value` lines) and
 * the text part are read here. A gateway that forwards a bounce it received (attached as a
 * message of its own) is read through the attached report, one level deep.
 */
import { createHash } from 'node:crypto';
import type { Attachment, ParsedMail } from 'mailparser';
import { QUOTED_MESSAGE_ID, QUOTED_RETURN_PATH, QUOTED_TO } from './bounce-texts.js';
import { addressesIn, fieldGroups, statusRecipients, typedAddress, type ReportedRecipient } from './dsn.js';
import type { InboundEvent, InboundSource } from './intake.js';
import { addressesOf, headerValues, inlineReturnedHeaders, parseMime, returnedHeaders } from './mime.js';
import { sesEvents, sesNotificationInText } from './ses.js';
import { readBounceText } from './text-bounce.js';

export { MAX_MIME_PARTS, UnreadableMail } from './mime.js';
export type { ReportedRecipient } from './dsn.js';

/** What a raw message reports. */
export interface InboundReport {
  /** `ignored`: no failure (a DSN whose action is delayed, delivered, relayed or expanded; a delay warning), or nothing recognised. */
  kind: 'bounce' | 'complaint' | 'ignored';
  /** Whom it is about: the failed recipients of a bounce, the complaining one, or (ignored) any named. */
  recipients: ReportedRecipient[];
  /** Addresses that may carry our VERP token, strongest first. */
  verp: string[];
  /** The returned message's `Message-ID`, when the report carries it. */
  messageId: string | null;
}

const DELIVERY_STATUS = new Set(['message/delivery-status', 'message/global-delivery-status']);
const FEEDBACK_REPORT = 'message/feedback-report';
const RETURNED = new Set(['message/rfc822', 'text/rfc822-headers', 'message/global', 'message/global-headers']);
/** Feedback types that are no complaint: a "this is not spam" report, a DMARC/DKIM failure report. */
const NOT_COMPLAINTS = new Set(['not-spam', 'auth-failure']);

/** The most of a raw body read as text when the MIME parser finds no text part in it. */
const MAX_RAW_TEXT = 256 * 1024;

/** The body of a raw message (after its header block), as text: at most MAX_RAW_TEXT characters. */
function rawBody(raw: Buffer | string): string {
  const text = (typeof raw === 'string' ? raw : raw.subarray(0, 2 * MAX_RAW_TEXT).toString('utf8')).slice(0, 2 * MAX_RAW_TEXT);
  const end = text.search(/\r?\n\r?\n/);
  // The MIME boundaries and part headers of a structure the parser could not follow are no text.
  const body = end < 0 ? '' : text.slice(end).replace(/^(?:--[^\s]*|Content-[\w-]+:[^\n]*|[ \t]+[\w-]+=[^\n]*)\r?$/gim, '');
  return body.trim().slice(0, MAX_RAW_TEXT);
}

/** The text of the parts the parser took for attachments though they are text (not returned headers). */
function textAttachments(attachments: Attachment[]): string {
  return attachments
    .filter((a) => a.contentType.startsWith('text/') && !RETURNED.has(a.contentType))
    .map((a) => a.content.subarray(0, MAX_RAW_TEXT).toString('utf8'))
    .join('\n');
}

/** Whether an attached message is itself a report (its header block says `multipart/report`). */
function isReport(part: Attachment): boolean {
  const head = part.content.subarray(0, 16 * 1024).toString('latin1');
  const end = head.search(/\r?\n\r?\n/);
  return /^content-type:[ \t]*multipart\/report/im.test(end < 0 ? head : head.slice(0, end));
}

/** The main content type of the parsed message (lower case). */
function contentTypeOf(mail: ParsedMail): string {
  const v = mail.headers.get('content-type') as { value?: string } | string | undefined;
  return String(typeof v === 'string' ? v : (v?.value ?? '')).toLowerCase();
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

/** The complaint of an ARF report's `message/feedback-report` part (a `not-spam` or `auth-failure` report is ignored). */
function fromFeedback(part: Attachment, original: Map<string, string>, verp: string[]): Pick<InboundReport, 'kind' | 'recipients'> {
  const fields = fieldGroups(part.content.toString('utf8'))[0] ?? new Map<string, string>();
  const type = (fields.get('feedback-type') ?? 'abuse').toLowerCase().trim();
  // `[^<>]`: each `<` of a run of them is not read again to the end of the header.
  const email =
    typedAddress(fields.get('original-rcpt-to')) ?? typedAddress(original.get('to')?.match(/<([^<>]+)>/)?.[1] ?? original.get('to'));
  if (fields.get('original-mail-from')) verp.push(fields.get('original-mail-from')!);
  const recipients = [{ email, type: null, status: null, reason: `feedback-type: ${type}` }];
  return { kind: NOT_COMPLAINTS.has(type) ? 'ignored' : 'complaint', recipients };
}

/** An Amazon SES bounce or complaint notification sent by mail (its JSON, or SNS's envelope of it, as the text). */
function fromSesText(text: string): (Pick<InboundReport, 'kind' | 'recipients'> & { messageId: string | null }) | null {
  const notification = sesNotificationInText(text);
  if (!notification) return null;
  const events = sesEvents(notification);
  if (events.length === 0) return null;
  const recipients = events.map((e) => ({ email: e.email, type: e.type, status: null, reason: e.reason ?? null }));
  return { kind: events[0].kind, recipients, messageId: events[0].messageId ?? null };
}

/**
 * Parses one raw message. `envelopeTo` are the SMTP envelope recipients when it came through the
 * listener: the VERP address it was sent to, the strongest name of the message. `depth` is 1 when
 * it is the report a gateway forwarded (it is not looked into further). Throws UnreadableMail when
 * the MIME parser gives up on it.
 */
export async function parseInboundMail(raw: Buffer | string, envelopeTo: readonly string[] = [], depth = 0): Promise<InboundReport> {
  const mail = await parseMime(raw);
  const attachments = mail.attachments ?? [];
  const status = attachments.find((a) => DELIVERY_STATUS.has(a.contentType));
  const feedback = attachments.find((a) => a.contentType === FEEDBACK_REPORT);
  const returned = attachments.find((a) => RETURNED.has(a.contentType));
  const multipart = contentTypeOf(mail).startsWith('multipart/');
  const original = returned || !multipart ? returnedHeaders(returned) : await inlineReturnedHeaders(raw);
  // A message whose MIME structure is broken (a boundary that is never found, a content type the
  // parser does not take for text) has its report in a text attachment or only in its raw body.
  const text = [mail.text ?? '', textAttachments(attachments)].filter(Boolean).join('\n') || (attachments.length === 0 ? rawBody(raw) : '');
  const verp = [
    ...envelopeTo,
    ...['delivered-to', 'x-original-to', 'envelope-to', 'x-envelope-to'].flatMap((h) => headerValues(mail, h)),
    ...addressesOf(mail.to),
    ...(original.get('return-path') ? [original.get('return-path')!] : []),
  ];
  let messageId = original.get('message-id') ?? null;
  const report = (found: Pick<InboundReport, 'kind' | 'recipients'>): InboundReport => ({ ...found, verp: clean(verp), messageId });

  if (feedback) return report(fromFeedback(feedback, original, verp));
  // Outlook.com's complaint reports: the complained message inline, its recipient in a header of its own.
  const complainer = original.get('x-hmxmroriginalrecipient');
  if (complainer)
    return report({ kind: 'complaint', recipients: [{ email: complainer, type: null, status: null, reason: 'feedback-type: abuse' }] });
  const ses = fromSesText(text);
  if (ses) {
    messageId ??= ses.messageId;
    return report(ses);
  }

  const dsn = statusRecipients(status?.content.toString('utf8') ?? '', text);
  // A report whose MIME boundaries are broken, or a system that writes the fields into its text.
  const fields = dsn.failed.length + dsn.other.length > 0 ? dsn : statusRecipients(text, text);
  if (fields.failed.length > 0) return report({ kind: 'bounce', recipients: fields.failed });
  if (fields.other.length > 0) return report({ kind: 'ignored', recipients: fields.other });

  // A gateway that forwards the bounce it received: the report is the attached one.
  const forwarded = depth === 0 ? attachments.find((a) => a.contentType === 'message/rfc822' && isReport(a)) : undefined;
  if (forwarded) {
    const inner = await parseInboundMail(forwarded.content, envelopeTo, depth + 1);
    if (inner.kind !== 'ignored') return { ...inner, verp: clean([...verp, ...inner.verp]), messageId: inner.messageId ?? messageId };
  }

  const reading = readBounceText({
    subject: mail.subject ?? '',
    text,
    from: mail.from?.text ?? '',
    own: [...addressesOf(mail.from), ...clean(verp)],
    failedRecipients: headerValues(mail, 'x-failed-recipients')
      .flatMap((v) => v.split(','))
      .map((v) => v.trim()),
    originalTo: addressesIn(original.get('to') ?? QUOTED_TO.exec(text)?.[1] ?? '', 5),
  });
  if (reading.kind === 'bounce') {
    // A text bounce quotes the original's headers in its text when it does not attach them.
    messageId ??= QUOTED_MESSAGE_ID.exec(text)?.[1] ?? null;
    const quotedFrom = QUOTED_RETURN_PATH.exec(text)?.[1];
    if (quotedFrom) verp.push(quotedFrom);
    return report({ kind: 'bounce', recipients: reading.recipients });
  }
  if (reading.kind === 'delay') return report({ kind: 'ignored', recipients: reading.recipients });

  return report({ kind: 'ignored', recipients: [] });
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
