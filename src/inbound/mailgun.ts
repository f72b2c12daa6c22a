/**
 * Mailgun's webhooks (the JSON ones): `{signature: {timestamp, token, signature}, "event-data": {…}}`,
 * signed with HMAC-SHA256 of timestamp + token under the account's webhook signing key.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { InboundEvent } from './intake.js';
import { classifyBounce } from '../delivery/bounce-classes.js';
import { MalformedPayload, addressOf, joined, objectOf, textOf } from './relay-input.js';
import { bareMessageId } from '../util/email.js';

/** True when the payload's `signature` object is signed with `signingKey`; compared in constant time. */
export function verifyMailgun(payload: unknown, signingKey: string): boolean {
  const s = objectOf(objectOf(payload)?.signature);
  const timestamp = textOf(s?.timestamp);
  const token = textOf(s?.token);
  const signature = textOf(s?.signature);
  if (!timestamp || !token || !signature || !/^[0-9a-f]{64}$/i.test(signature)) return false;
  const expected = createHmac('sha256', signingKey)
    .update(timestamp + token)
    .digest();
  return timingSafeEqual(expected, Buffer.from(signature, 'hex'));
}

/**
 * The bounce or complaint of a webhook payload: `failed` with severity `permanent` is a bounce
 * (hard when the answer says the address is gone, or Mailgun refused to send to an address on its
 * bounce list), `failed` with severity `temporary` is a delivery Mailgun will retry (no bounce yet:
 * left out, like a DSN saying `delayed`), `complained` is a complaint; other events are left out.
 * A payload without `event-data` is a 400.
 */
export function mailgunEvents(payload: unknown): InboundEvent[] {
  const data = objectOf(objectOf(payload)?.['event-data']);
  if (!data) throw new MalformedPayload('A Mailgun webhook payload carries an "event-data" object.');
  const event = textOf(data.event);
  const email = addressOf(data.recipient);
  if (!email) return [];
  const headers = objectOf(objectOf(data.message)?.headers);
  const base = { source: 'mailgun' as const, email, messageId: bareMessageId(headers?.['message-id']), eventKey: textOf(data.id) };
  if (event === 'complained') return [{ ...base, kind: 'complaint', type: null, reason: 'Spam complaint' }];
  if (event !== 'failed' || textOf(data.severity) !== 'permanent') return [];
  const reason = textOf(data.reason);
  // Mailgun refused to send to an address it suppressed: the address's own earlier verdict.
  if (reason === 'suppress-complaint') return [{ ...base, kind: 'complaint', type: null, reason: 'Suppressed by Mailgun: complaint' }];
  if (reason === 'suppress-unsubscribe') return [];
  const status = objectOf(data['delivery-status']);
  const answer = joined(status?.code, status?.message, status?.description);
  const type = reason === 'suppress-bounce' ? 'hard' : classifyBounce(null, answer);
  return [{ ...base, kind: 'bounce', type, reason: answer ?? reason }];
}
