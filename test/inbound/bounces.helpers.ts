import assert from 'node:assert/strict';
import type { Config } from '../../src/config.js';
import { trackingLinks } from '../../src/delivery/tracking.js';
import { testClock } from '../../src/util/clock.js';
import { drainQueue, setup, type Client } from '../helpers.js';
import type { SmtpSink } from '../support/smtp-sink.js';
import { createSend, group, sendForm, typeWith, verifiedSender, type SendsContext } from '../modules/single-sends.helpers.js';
import { fixture } from './fixtures.js';

export const INBOUND_TOKEN = 'inbound-token-0123456789';
export const BOUNCE_ADDRESS = 'bounces@mail.example.test';

/** `setupSends` with VERP and the inbound route on, mail to a real SMTP sink. */
export async function setupBounces(overrides: Partial<Config> = {}): Promise<SendsContext & { sink: SmtpSink }> {
  const clock = testClock('2030-01-15T10:00:00.000Z');
  const t = await setup(
    { bounceAddress: BOUNCE_ADDRESS, inboundToken: INBOUND_TOKEN, ...overrides },
    { env: { PUBLIC_URL: 'https://mail.example.test' }, clock, sink: true },
  );
  return { ...t, clock, sink: t.sink! };
}

/** A message the service really sent: its row id, address, Message-ID (bare) and its VERP address. */
export interface SentMessage {
  id: number;
  email: string;
  messageId: string;
  verp: string;
  sendId: number;
}

/**
 * Sends one single send of account `c` to `emails` through the queue to the sink, and returns
 * each message as sent (its Message-ID checked against what the sink received) with its VERP address.
 */
export async function sendTo(t: SendsContext & { sink: SmtpSink }, c: Client, emails: string[]): Promise<SentMessage[]> {
  const { type } = await typeWith(
    c,
    emails.map((e) => [e]),
  );
  const base = { sender: await verifiedSender(t, c), group: await group(c), type };
  const utr = await createSend(c, sendForm(base));
  await drainQueue(t);
  const send = await t.database.db.selectFrom('single_sends').select('id').where('utr', '=', utr).executeTakeFirstOrThrow();
  const rows = await t.database.db.selectFrom('mail_messages').selectAll().where('single_send_id', '=', send.id).execute();
  const links = trackingLinks(t.config);
  return emails.map((email) => {
    const row = rows.find((r) => r.email === email)!;
    assert.equal(row.state, 'sent', `${email} was sent`);
    const received = t.sink.messages.find((m) => m.header('message-id') === `<${row.message_id}>`);
    assert.ok(received, `the sink received the mail to ${email}`);
    // The envelope sender the message carries with BOUNCE_ADDRESS set (the transport sets it from the token).
    const verp = links.verpAddress(Number(row.id))!;
    return { id: Number(row.id), email, messageId: row.message_id!, verp, sendId: send.id };
  });
}

/** A fixture built around a sent message. */
export function reportOf(name: string, m: SentMessage, opts: { verp?: string; messageId?: string } = {}): Buffer {
  return fixture(name, { rcpt: m.email, verp: opts.verp ?? m.verp, messageId: opts.messageId ?? m.messageId });
}

/** Posts a raw message to the inbound route. */
export function postMail(t: SendsContext, raw: Buffer | string, opts: { token?: string; type?: string } = {}) {
  return t.anon.request('POST', `/inbound/email/${opts.token ?? INBOUND_TOKEN}`, {
    payload: raw,
    headers: { 'content-type': opts.type ?? 'message/rfc822' },
  });
}

/** The statistics of a send. */
export function countersOf(t: SendsContext, sendId: number) {
  return t.database.db
    .selectFrom('single_sends')
    .select(['delivered', 'bounces', 'hard_bounces', 'soft_bounces', 'spam_reports'])
    .where('id', '=', sendId)
    .executeTakeFirstOrThrow();
}

/** The suppression rows of an address (any account). */
export function suppressionsOf(t: SendsContext, email: string) {
  return t.database.db
    .selectFrom('suppressions')
    .select(['user_id', 'email', 'reason', 'detail'])
    .where('email_key', '=', email.toLowerCase())
    .execute();
}
