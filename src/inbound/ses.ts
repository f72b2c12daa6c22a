/**
 * Amazon SES notifications delivered by SNS over HTTP(S): the SNS envelope (its signature checked
 * against the SNS signing certificate), subscription confirmations, and the SES bounce and
 * complaint notifications carried in `Message`.
 */
import { X509Certificate, verify } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { InboundEvent } from './intake.js';
import { BadSignature, MalformedPayload, addressOf, joined, objectOf, textOf } from './relay-input.js';
import { bareMessageId } from '../util/email.js';

/** The SNS message types this endpoint reads. */
export type SnsType = 'Notification' | 'SubscriptionConfirmation' | 'UnsubscribeConfirmation';

/** An SNS message as posted: every member is text. */
export type SnsMessage = Record<string, string> & { Type: SnsType };

/** The fields signed, in order, per message type (AWS: "Verifying the signatures of Amazon SNS messages"). */
const SIGNED_FIELDS: Record<SnsType, string[]> = {
  Notification: ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
  SubscriptionConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
  UnsubscribeConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
};

/** SignatureVersion → the digest of its RSA signature. */
const DIGESTS: Record<string, string> = { '1': 'sha1', '2': 'sha256' };

/** Reads a body as an SNS message; anything else (no known `Type`, non-text members) is a 400. */
export function snsMessageOf(payload: unknown): SnsMessage {
  const o = objectOf(payload);
  const type = o?.Type;
  if (!o || typeof type !== 'string' || !Object.hasOwn(SIGNED_FIELDS, type)) {
    throw new MalformedPayload(
      'An SNS message is a JSON object whose "Type" is Notification, SubscriptionConfirmation or UnsubscribeConfirmation.',
    );
  }
  for (const field of SIGNED_FIELDS[type as SnsType]) {
    const v = o[field];
    // Subject is the one optional field (a Notification may have none).
    if ((v === undefined || v === null) && field === 'Subject') continue;
    if (typeof v !== 'string') throw new MalformedPayload(`The SNS message has no "${field}" text.`);
  }
  return o as SnsMessage;
}

/** The canonical string SNS signs: `name\nvalue\n` for each signed field present, in AWS's order. */
export function snsStringToSign(message: SnsMessage): string {
  return SIGNED_FIELDS[message.Type]
    .filter((f) => typeof message[f] === 'string')
    .map((f) => `${f}\n${message[f]}\n`)
    .join('');
}

/**
 * True for a URL SNS itself serves: https on an `sns.<region>.amazonaws.com` host (the signing
 * certificate, a subscription's confirmation link). Anything else is never fetched.
 */
export function isSnsUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && url.port === '' && /^sns\.[a-z0-9-]+\.amazonaws\.com$/.test(url.hostname) && !url.username;
  } catch {
    return false;
  }
}

/**
 * True when the message's `Signature` (base64, RSA with SHA-1 for SignatureVersion 1, SHA-256 for
 * 2) signs its canonical string under the certificate `certPem`. Unknown versions verify nothing.
 */
export function verifySnsSignature(message: SnsMessage, certPem: string): boolean {
  const digest = DIGESTS[message.SignatureVersion];
  if (!digest || typeof message.Signature !== 'string') return false;
  try {
    const key = new X509Certificate(certPem).publicKey;
    return verify(digest, Buffer.from(snsStringToSign(message), 'utf8'), key, Buffer.from(message.Signature, 'base64'));
  } catch {
    return false;
  }
}

/** One SES recipient list member's address (`emailAddress`). */
const recipientOf = (r: unknown) => addressOf(objectOf(r)?.emailAddress);

/** The message's original `Message-ID`: `commonHeaders.messageId`, else the header among `mail.headers`. */
function messageIdOf(mail: Record<string, unknown> | null): string | null {
  const common = bareMessageId(objectOf(mail?.commonHeaders)?.messageId);
  if (common) return common;
  const headers = Array.isArray(mail?.headers) ? mail.headers : [];
  for (const h of headers) {
    const o = objectOf(h);
    if (textOf(o?.name)?.toLowerCase() === 'message-id') return bareMessageId(o?.value);
  }
  return null;
}

/**
 * The bounces and complaints of an SES notification (the JSON in an SNS `Message`): either an
 * identity notification (`notificationType`) or an event-publishing record (`eventType`). Bounce:
 * one event per bounced recipient, `Permanent` hard, `Transient` and `Undetermined` soft.
 * Complaint: one per complained recipient. Deliveries and other events are left out. Each event's
 * key is SES's `feedbackId` with the recipient (one notification names several recipients).
 */
export function sesEvents(notification: unknown): InboundEvent[] {
  const n = objectOf(notification);
  if (!n) throw new MalformedPayload('The SNS Message is not an SES notification (a JSON object).');
  const kind = textOf(n.notificationType) ?? textOf(n.eventType);
  const mail = objectOf(n.mail);
  const messageId = messageIdOf(mail);
  const events: InboundEvent[] = [];
  if (kind === 'Bounce') {
    const bounce = objectOf(n.bounce);
    const type = textOf(bounce?.bounceType) === 'Permanent' ? 'hard' : 'soft';
    const feedbackId = textOf(bounce?.feedbackId);
    for (const r of Array.isArray(bounce?.bouncedRecipients) ? bounce.bouncedRecipients : []) {
      const email = recipientOf(r);
      if (!email) continue;
      const o = objectOf(r);
      const reason = joined(o?.diagnosticCode, o?.status) ?? joined(bounce?.bounceType, bounce?.bounceSubType);
      events.push({ source: 'ses', kind: 'bounce', type, email, messageId, reason, eventKey: feedbackId && `${feedbackId}:${email}` });
    }
  } else if (kind === 'Complaint') {
    const complaint = objectOf(n.complaint);
    const feedbackId = textOf(complaint?.feedbackId);
    const reason = joined('Spam complaint', complaint?.complaintFeedbackType);
    for (const r of Array.isArray(complaint?.complainedRecipients) ? complaint.complainedRecipients : []) {
      const email = recipientOf(r);
      if (!email) continue;
      events.push({
        source: 'ses',
        kind: 'complaint',
        type: null,
        email,
        messageId,
        reason,
        eventKey: feedbackId && `${feedbackId}:${email}`,
      });
    }
  }
  return events;
}

/** Parses an SNS Notification's `Message` as JSON; a Message that is none is a 400. */
export function sesNotificationOf(message: SnsMessage): unknown {
  try {
    return JSON.parse(message.Message);
  } catch {
    throw new MalformedPayload('The SNS Message is not JSON: not an SES notification.');
  }
}

/** Fetches a text over HTTPS (the SNS certificate, a confirmation link); rejects on any failure. */
export type FetchText = (url: string) => Promise<{ status: number; text: string }>;

/** The fetch of the service: no redirects (the host was checked), a time limit, a size limit. */
export const fetchText: FetchText = async (url) => {
  const res = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  return { status: res.status, text: text.slice(0, 64 * 1024) };
};

/** The signing certificate could not be fetched for a reason of the network, not of the message: 503, SNS retries. */
export class CertificateUnavailable extends Error {}

/**
 * Where signing certificates come from: the PEM file of `SNS_CERT_FILE` (read once) when set,
 * else `SigningCertURL`, fetched and kept (a few, by URL). The URL must be an SNS one either way
 * (see isSnsUrl): anything else is a 401 before any fetch.
 */
export function snsCertificates(certFile: string | null, fetcher: FetchText = fetchText): (url: unknown) => Promise<string> {
  let fromFile: Promise<string> | null = null;
  const cache = new Map<string, string>();
  return async (url) => {
    if (!isSnsUrl(url)) throw new BadSignature('The SNS signing certificate must come from an https://sns.<region>.amazonaws.com URL.');
    if (certFile) return (fromFile ??= readFile(certFile, 'utf8'));
    const kept = cache.get(url);
    if (kept) return kept;
    let answer: { status: number; text: string };
    try {
      answer = await fetcher(url);
    } catch (err) {
      throw new CertificateUnavailable(`The SNS signing certificate could not be fetched: ${(err as Error).message}`);
    }
    if (answer.status !== 200 || !answer.text.includes('-----BEGIN CERTIFICATE-----')) {
      throw new BadSignature('The SNS signing certificate URL does not serve a certificate.');
    }
    if (cache.size >= 16) cache.delete(cache.keys().next().value as string);
    cache.set(url, answer.text);
    return answer.text;
  };
}

/**
 * Confirms a verified subscription by fetching its `SubscribeURL`, only when that is an SNS URL.
 * Returns what happened, for the log; never throws.
 */
export async function confirmSubscription(
  message: SnsMessage,
  fetcher: FetchText = fetchText,
): Promise<'confirmed' | 'refused' | 'failed'> {
  if (!isSnsUrl(message.SubscribeURL)) return 'refused';
  try {
    const { status } = await fetcher(message.SubscribeURL);
    return status === 200 ? 'confirmed' : 'failed';
  } catch {
    return 'failed';
  }
}

/** The most text read as an SES notification sent by mail (one notification is a few KB). */
const MAX_SES_TEXT = 256 * 1024;

/**
 * An SES notification sent by mail (an SNS email subscription): the text is its JSON, or SNS's
 * envelope whose `Message` is; SNS's footer (after a `--` line) is left out. Null when the text is
 * no such JSON.
 */
export function sesNotificationInText(text: string): unknown {
  const start = text.trimStart();
  if (!start.startsWith('{') || start.length > MAX_SES_TEXT) return null;
  // A line longer than an MTA takes is broken with `!` and a folded line end: joined back.
  const body = start.replace(/!\r?\n /g, '');
  const footer = body.search(/\n--[^\S\n]*\n/);
  try {
    const o = objectOf(JSON.parse(footer < 0 ? body : body.slice(0, footer)));
    const inner = o && typeof o.Message === 'string' && o.Type === 'Notification' ? objectOf(JSON.parse(o.Message)) : o;
    return inner && (typeof inner.notificationType === 'string' || typeof inner.eventType === 'string') ? inner : null;
  } catch {
    return null;
  }
}
