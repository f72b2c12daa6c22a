/**
 * Postmark's Bounce and Spam Complaint webhooks: one JSON record per request, authenticated with
 * the HTTP basic auth credentials set in the webhook's URL (`POSTMARK_WEBHOOK_AUTH`).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { InboundEvent } from './intake.js';
import { MalformedPayload, addressOf, joined, objectOf, textOf } from './relay-input.js';
import { bareMessageId } from '../util/email.js';

/**
 * True when an `Authorization` header carries exactly `expected` (`user:password`) as basic auth.
 * Both sides are hashed first, so the comparison takes the same time whatever their lengths.
 */
export function verifyPostmarkAuth(authorization: unknown, expected: string): boolean {
  if (typeof authorization !== 'string') return false;
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization);
  const given = m ? Buffer.from(m[1], 'base64').toString('utf8') : '';
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(expected)) && m !== null;
}

/** Postmark's bounce types (`Type`) that are bounces, and of which kind; the others are left out. */
const BOUNCE_TYPES: Record<string, 'hard' | 'soft'> = {
  HardBounce: 'hard',
  BadEmailAddress: 'hard',
  SoftBounce: 'soft',
  DnsError: 'soft',
  SpamNotification: 'soft',
  Blocked: 'soft',
  DMARCPolicy: 'soft',
  VirusNotification: 'soft',
  Unknown: 'soft',
};
// Left out on purpose: Transient (a delay Postmark retries), AutoResponder, AddressChange,
// Subscribe/Unsubscribe, ChallengeVerification, OpenRelayTest, ManuallyDeactivated, Unconfirmed,
// SMTPApiError, InboundError, TemplateRenderingFailed: none says the delivery failed for good.

/** The unfolded header lines of one header block. */
function headerLines(block: string): string[] {
  return block.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/);
}

/**
 * The original message's `Message-ID` in a bounce dump (`Content`): the bounce's own header block
 * comes first, so a Message-ID after it (the returned headers) wins; a dump that is only one header
 * block (the original message itself) gives its own.
 */
export function originalMessageId(content: unknown): string | null {
  if (typeof content !== 'string' || content === '') return null;
  const split = /\r?\n\r?\n/.exec(content);
  const top = split ? content.slice(0, split.index) : content;
  const rest = split ? content.slice(split.index) : '';
  const find = (block: string) => {
    for (const line of headerLines(block)) {
      // `\S` first: the blanks are read by `\s*` alone (a line ending in a lone CR would be quadratic).
      const m = /^message-id:\s*(\S.*)$/i.exec(line);
      if (m) return bareMessageId(m[1]);
    }
    return null;
  };
  return find(rest) ?? find(top);
}

/**
 * The bounce or complaint of one webhook record: `RecordType` `Bounce` by its `Type` (see
 * BOUNCE_TYPES), `SpamComplaint` as a complaint. It names the message by `Metadata.message_ref`
 * (our VERP token, set as `X-PM-Metadata-message_ref` on every message) and by the original
 * Message-ID in `Content` when the dump is included. A body that is no record is a 400.
 */
export function postmarkEvents(payload: unknown): InboundEvent[] {
  const r = objectOf(payload);
  const recordType = textOf(r?.RecordType);
  if (!r || !recordType) throw new MalformedPayload('A Postmark webhook payload is a JSON object with a "RecordType".');
  const email = addressOf(r.Email);
  if (!email) return [];
  const base = {
    source: 'postmark' as const,
    email,
    verp: textOf(objectOf(r.Metadata)?.message_ref),
    messageId: originalMessageId(r.Content),
    eventKey: textOf(r.ID),
  };
  const type = textOf(r.Type);
  if (recordType === 'SpamComplaint' || (recordType === 'Bounce' && type === 'SpamComplaint')) {
    return [{ ...base, kind: 'complaint', type: null, reason: joined(r.Description) ?? 'Spam complaint' }];
  }
  if (recordType !== 'Bounce' || !type || !Object.hasOwn(BOUNCE_TYPES, type)) return [];
  return [{ ...base, kind: 'bounce', type: BOUNCE_TYPES[type], reason: joined(r.Details, r.Description) }];
}
