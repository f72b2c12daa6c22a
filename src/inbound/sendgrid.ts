/**
 * SendGrid's Event Webhook: a JSON array of events, signed with ECDSA (P-256, SHA-256) over the
 * timestamp header followed by the exact body bytes. The signature is checked with SendGrid's own
 * verifier (`@sendgrid/eventwebhook`); the events become `InboundEvent`s here.
 */
import sendgridWebhook from '@sendgrid/eventwebhook';
import type { InboundEvent } from './intake.js';
import { classifyBounce } from '../delivery/bounce-classes.js';
import { MalformedPayload, addressOf, joined, objectOf, textOf } from './relay-input.js';
import { bareMessageId } from '../util/email.js';

const { EventWebhook, EventWebhookHeader } = sendgridWebhook;

/** The request headers SendGrid signs with (lower-case, as Node gives them). */
export const SENDGRID_SIGNATURE_HEADER = EventWebhookHeader.SIGNATURE().toLowerCase();
export const SENDGRID_TIMESTAMP_HEADER = EventWebhookHeader.TIMESTAMP().toLowerCase();

/**
 * A verifier for one verification key (the base64 public key of the Event Webhook's settings):
 * true when `signature` signs `timestamp` + `body`. A key that cannot be read fails at creation.
 */
export function sendgridVerifier(publicKey: string): (body: Buffer, signature: unknown, timestamp: unknown) => boolean {
  const webhook = new EventWebhook();
  const key = webhook.convertPublicKeyToECDSA(publicKey);
  return (body, signature, timestamp) => {
    if (typeof signature !== 'string' || typeof timestamp !== 'string' || signature === '' || timestamp === '') return false;
    try {
      return webhook.verifySignature(key, body, signature, timestamp) === true;
    } catch {
      // A signature that is not base64 DER throws inside the verifier: it verifies nothing.
      return false;
    }
  };
}

/**
 * `dropped` reasons that say something about the address itself (SendGrid drops a message to an
 * address on its own suppression lists); every other reason (unsubscribed, spam content, quota,
 * invalid SMTPAPI header, …) concerns SendGrid's account, not the recipient, and is ignored.
 */
const DROPPED: Record<string, { kind: 'bounce' | 'complaint'; type: 'hard' | null }> = {
  'bounced address': { kind: 'bounce', type: 'hard' },
  invalid: { kind: 'bounce', type: 'hard' },
  'invalid address': { kind: 'bounce', type: 'hard' },
  'spam reporting address': { kind: 'complaint', type: null },
};

/** One SendGrid event as an `InboundEvent`, or null when it is none of ours to take in. */
function eventOf(value: unknown): InboundEvent | null {
  const e = objectOf(value);
  if (!e) return null;
  const event = textOf(e.event);
  const base = {
    source: 'sendgrid' as const,
    email: addressOf(e.email),
    messageId: bareMessageId(e['smtp-id']),
    eventKey: textOf(e.sg_event_id),
  };
  if (event === 'spamreport') return { ...base, kind: 'complaint', type: null, reason: 'Spam report' };
  if (event === 'bounce') {
    const reason = joined(e.status, e.reason);
    // `blocked`: the receiver refused the message (reputation, content, policy), not the address.
    const blocked = textOf(e.type) === 'blocked';
    const invalidAddress = textOf(e.bounce_classification)?.toLowerCase() === 'invalid address';
    const type = blocked ? 'soft' : invalidAddress ? 'hard' : classifyBounce(null, reason);
    return { ...base, kind: 'bounce', type, reason };
  }
  if (event === 'dropped') {
    const reason = textOf(e.reason);
    const verdict = reason ? DROPPED[reason.toLowerCase()] : undefined;
    return verdict ? { ...base, ...verdict, reason: `Dropped by SendGrid: ${reason}` } : null;
  }
  return null;
}

/**
 * The bounces and complaints of an Event Webhook payload (an array of events); delivered, open,
 * click, deferred and the other events are left out, and so are events without a recipient. A body
 * that is not an array is a 400.
 */
export function sendgridEvents(payload: unknown): InboundEvent[] {
  if (!Array.isArray(payload)) throw new MalformedPayload('A SendGrid Event Webhook payload is a JSON array of events.');
  return payload.map(eventOf).filter((e): e is InboundEvent => e !== null && e.email !== null);
}
