import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { SmtpSink } from '../support/smtp-sink.js';
import type { SendsContext } from '../modules/single-sends.helpers.js';
import { countersOf, sendTo, setupBounces, suppressionsOf } from './bounces.helpers.js';
import { postRaw } from './relay-support.js';

const MAILGUN_KEY = 'mailgun-signing-key-for-tests';

/**
 * The relay webhooks on messages the service really sent: each provider's event, signed as the
 * provider signs it, is counted once on the message it names, with its effects; another account's
 * message is never touched.
 */
describe('relay webhooks end to end: events about messages really sent', () => {
  let t: SendsContext & { sink: SmtpSink };
  let sendgridKey: KeyObject;
  let seq = 0;
  const addr = (tag: string) => `${tag}.${++seq}@example.com`;

  before(async () => {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    sendgridKey = pair.privateKey;
    t = await setupBounces({
      sendgridWebhookPublicKey: pair.publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
      mailgunWebhookSigningKey: MAILGUN_KEY,
    });
  });
  after(() => t.close());

  const sendgrid = (events: object[]) => {
    const body = JSON.stringify(events);
    const timestamp = '1700000000';
    const signature = sign('sha256', Buffer.from(timestamp + body), sendgridKey).toString('base64');
    return postRaw(t.app, '/inbound/sendgrid', body, {
      'x-twilio-email-event-webhook-timestamp': timestamp,
      'x-twilio-email-event-webhook-signature': signature,
    });
  };

  const mailgun = (eventData: object) => {
    const timestamp = '1700000000';
    const token = `token-${++seq}`;
    const signature = createHmac('sha256', MAILGUN_KEY)
      .update(timestamp + token)
      .digest('hex');
    return postRaw(t.app, '/inbound/mailgun', JSON.stringify({ signature: { timestamp, token, signature }, 'event-data': eventData }));
  };

  test('SendGrid: a bounce naming a sent message by smtp-id counts once as hard and suppresses; a spam report counts once', async () => {
    const [gone, complains] = await sendTo(t, t.a, [addr('sg-gone'), addr('sg-spam')]);
    const bounce = {
      email: gone.email,
      timestamp: 1700000000,
      'smtp-id': `<${gone.messageId}>`,
      event: 'bounce',
      type: 'bounce',
      status: '5.1.1',
      reason: '550 5.1.1 The email account that you tried to reach does not exist',
      sg_event_id: `sg-bounce-${seq}`,
    };
    const spam = {
      email: complains.email,
      timestamp: 1700000000,
      'smtp-id': `<${complains.messageId}>`,
      event: 'spamreport',
      sg_event_id: `sg-spam-${seq}`,
    };
    const r = await sendgrid([bounce, spam]);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(await countersOf(t, gone.sendId), { delivered: 1, bounces: 1, hard_bounces: 1, soft_bounces: 0, spam_reports: 1 });
    assert.equal((await suppressionsOf(t, gone.email))[0]?.reason, 'hard_bounce');
    assert.equal((await suppressionsOf(t, complains.email))[0]?.reason, 'complaint');
    const unsubscribed = await t.database.db
      .selectFrom('unsubscribers')
      .select('email_key')
      .where('email_key', '=', complains.email)
      .where('unsubscribe_groups_id', 'is', null)
      .execute();
    assert.equal(unsubscribed.length, 1, 'the complaint put the address on the global list');
    // The provider retries the same batch: nothing counts twice.
    assert.equal((await sendgrid([bounce, spam])).status, 200);
    assert.deepEqual(await countersOf(t, gone.sendId), { delivered: 1, bounces: 1, hard_bounces: 1, soft_bounces: 0, spam_reports: 1 });
  });

  test("Mailgun: a permanent failure counts on its message; an event naming another account's message changes nothing there", async () => {
    const [mine] = await sendTo(t, t.a, [addr('mg-full')]);
    const [theirs] = await sendTo(t, t.b, [addr('mg-other')]);
    const failed = (m: typeof mine, id: string) => ({
      id,
      event: 'failed',
      severity: 'permanent',
      reason: 'bounce',
      recipient: m.email,
      message: { headers: { 'message-id': m.messageId } },
      'delivery-status': { code: 552, message: '5.2.2 Mailbox full', description: '' },
    });
    assert.equal((await mailgun(failed(mine, `mg-${seq}`))).status, 200);
    assert.deepEqual(await countersOf(t, mine.sendId), { delivered: 0, bounces: 1, hard_bounces: 0, soft_bounces: 1, spam_reports: 0 });
    assert.deepEqual(await suppressionsOf(t, mine.email), [], 'one soft bounce does not suppress');
    // Matching never crosses accounts by accident: the event names b's message, so only b's counts move.
    assert.equal((await mailgun(failed(theirs, `mg-${seq}`))).status, 200);
    assert.deepEqual(await countersOf(t, theirs.sendId), { delivered: 0, bounces: 1, hard_bounces: 0, soft_bounces: 1, spam_reports: 0 });
    assert.deepEqual(await countersOf(t, mine.sendId), { delivered: 0, bounces: 1, hard_bounces: 0, soft_bounces: 1, spam_reports: 0 });
  });

  test('campaign mail goes out with its VERP envelope sender', async () => {
    const [m] = await sendTo(t, t.a, [addr('verp')]);
    const received = t.sink.messages.find((x) => x.header('message-id') === `<${m.messageId}>`)!;
    assert.equal(received.envelope.from, m.verp);
    assert.match(m.verp, /^bounces\+[0-9a-z]+-[0-9a-f]{16}@mail\.example\.test$/);
  });

  test('an event naming no message of this installation changes nothing', async () => {
    const [m] = await sendTo(t, t.a, [addr('sg-unknown')]);
    const r = await sendgrid([
      {
        email: m.email,
        'smtp-id': '<not-ours@elsewhere.example>',
        event: 'bounce',
        type: 'bounce',
        status: '5.1.1',
        reason: 'gone',
        sg_event_id: 'x',
      },
    ]);
    assert.equal(r.status, 200);
    assert.deepEqual(await countersOf(t, m.sendId), { delivered: 1, bounces: 0, hard_bounces: 0, soft_bounces: 0, spam_reports: 0 });
    assert.deepEqual(await suppressionsOf(t, m.email), []);
  });
});
