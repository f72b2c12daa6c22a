import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { sendgridEvents, sendgridVerifier } from '../../src/inbound/sendgrid.js';
import { setup, type TestContext } from '../helpers.js';
import { logCatcher, postRaw } from './relay-support.js';

/** A batch in the shape SendGrid's Event Webhook documentation gives (one event of each kind that matters). */
const BATCH = [
  {
    email: 'processed@example.com',
    timestamp: 1513299569,
    'smtp-id': '<14c5d75ce93.dfd.64b469@ismtpd-555>',
    event: 'processed',
    category: 'cat facts',
    sg_event_id: 'rbtnWrG1DVDGGGFHFyun0A==',
    sg_message_id: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.000000000000000000000',
  },
  {
    email: 'gone@example.com',
    timestamp: 1513299569,
    'smtp-id': '<abc123.42@mail.example.com>',
    event: 'bounce',
    category: 'cat facts',
    sg_event_id: '6g4ZI7SA-xmRDv57GoPIPw==',
    sg_message_id: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.000000000000000000000',
    reason: '550 5.1.1 The email account that you tried to reach does not exist.',
    status: '5.1.1',
    type: 'bounce',
    bounce_classification: 'Invalid Address',
  },
  {
    email: 'blocked@example.com',
    timestamp: 1513299569,
    'smtp-id': '<abc124.43@mail.example.com>',
    event: 'bounce',
    sg_event_id: 'blocked-event-1',
    reason: '550 5.7.1 Message rejected due to local policy',
    status: '5.7.1',
    type: 'blocked',
    bounce_classification: 'Reputation',
  },
  {
    email: 'full@example.com',
    timestamp: 1513299569,
    'smtp-id': '<abc125.44@mail.example.com>',
    event: 'bounce',
    sg_event_id: 'full-event-1',
    reason: '552 5.2.2 Mailbox full',
    status: '5.2.2',
    type: 'bounce',
  },
  {
    email: 'old-bounce@example.com',
    timestamp: 1513299569,
    'smtp-id': '<abc126.45@mail.example.com>',
    event: 'dropped',
    sg_event_id: 'dropped-event-1',
    reason: 'Bounced Address',
    status: '5.0.0',
  },
  { email: 'unsub@example.com', timestamp: 1513299569, event: 'dropped', sg_event_id: 'dropped-event-2', reason: 'Unsubscribed Address' },
  {
    email: 'angry@example.com',
    timestamp: 1513299569,
    'smtp-id': '<abc127.46@mail.example.com>',
    event: 'spamreport',
    sg_event_id: 'spam-event-1',
  },
  { email: 'later@example.com', timestamp: 1513299569, event: 'deferred', sg_event_id: 'deferred-1', response: '400 try again later' },
  { email: 'ok@example.com', timestamp: 1513299569, event: 'delivered', sg_event_id: 'delivered-1', response: '250 OK' },
  { email: 'ok@example.com', timestamp: 1513299569, event: 'open', sg_event_id: 'open-1' },
];

describe('sendgridEvents', () => {
  it('turns bounces, address drops and spam reports into events, matched by smtp-id, keyed by sg_event_id', () => {
    assert.deepEqual(sendgridEvents(BATCH), [
      {
        source: 'sendgrid',
        kind: 'bounce',
        type: 'hard',
        email: 'gone@example.com',
        messageId: 'abc123.42@mail.example.com',
        eventKey: '6g4ZI7SA-xmRDv57GoPIPw==',
        reason: '5.1.1 550 5.1.1 The email account that you tried to reach does not exist.',
      },
      {
        source: 'sendgrid',
        kind: 'bounce',
        type: 'soft',
        email: 'blocked@example.com',
        messageId: 'abc124.43@mail.example.com',
        eventKey: 'blocked-event-1',
        reason: '5.7.1 550 5.7.1 Message rejected due to local policy',
      },
      {
        source: 'sendgrid',
        kind: 'bounce',
        type: 'soft',
        email: 'full@example.com',
        messageId: 'abc125.44@mail.example.com',
        eventKey: 'full-event-1',
        reason: '5.2.2 552 5.2.2 Mailbox full',
      },
      {
        source: 'sendgrid',
        kind: 'bounce',
        type: 'hard',
        email: 'old-bounce@example.com',
        messageId: 'abc126.45@mail.example.com',
        eventKey: 'dropped-event-1',
        reason: 'Dropped by SendGrid: Bounced Address',
      },
      {
        source: 'sendgrid',
        kind: 'complaint',
        type: null,
        email: 'angry@example.com',
        messageId: 'abc127.46@mail.example.com',
        eventKey: 'spam-event-1',
        reason: 'Spam report',
      },
    ]);
  });

  it('classifies a bounce without SendGrid classification by its status: 5.1.1 hard, 5.0.0 with an unknown-user text hard, others soft', () => {
    const types = sendgridEvents([
      { email: 'a@example.com', event: 'bounce', type: 'bounce', status: '5.1.1', reason: 'bad' },
      { email: 'b@example.com', event: 'bounce', type: 'bounce', status: '5.0.0', reason: '550 unknown recipient' },
      { email: 'c@example.com', event: 'bounce', type: 'bounce', status: '5.7.1', reason: 'spam' },
    ]).map((e) => e.type);
    assert.deepEqual(types, ['hard', 'hard', 'soft']);
  });

  it('skips events without an address and members that are not objects; refuses a body that is not an array', () => {
    assert.deepEqual(sendgridEvents([null, 3, 'x', { event: 'bounce', status: '5.1.1' }]), []);
    assert.throws(() => sendgridEvents({ event: 'bounce' }), { statusCode: 400 });
    assert.throws(() => sendgridEvents(null), { statusCode: 400 });
  });
});

describe('POST /inbound/sendgrid', () => {
  let t: TestContext;
  let privateKey: KeyObject;
  const logs = logCatcher();
  const URL = '/inbound/sendgrid';
  const signed = (body: string | Buffer, timestamp = '1700000000', key: KeyObject = privateKey) => ({
    'x-twilio-email-event-webhook-timestamp': timestamp,
    'x-twilio-email-event-webhook-signature': sign('sha256', Buffer.concat([Buffer.from(timestamp), Buffer.from(body)]), key).toString(
      'base64',
    ),
  });

  before(async () => {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    privateKey = pair.privateKey;
    const publicKey = pair.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    t = await setup({ sendgridWebhookPublicKey: publicKey }, { logger: logs.logger });
  });
  after(() => t.close());

  it('checks the signature with the verifier over the exact bytes', () => {
    const pub = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const verify = sendgridVerifier(pub.publicKey.export({ type: 'spki', format: 'der' }).toString('base64'));
    const body = Buffer.from('[{"a":1}]');
    const h = signed(body, '42', pub.privateKey);
    assert.equal(verify(body, h['x-twilio-email-event-webhook-signature'], '42'), true);
    assert.equal(verify(Buffer.from('[{"a":1} ]'), h['x-twilio-email-event-webhook-signature'], '42'), false);
    assert.equal(verify(body, h['x-twilio-email-event-webhook-signature'], '43'), false);
    assert.equal(verify(body, 'not a signature', '42'), false);
  });

  it('takes in the bounces and complaints of a signed batch, and answers how many', async () => {
    // Pretty-printed on purpose: the signature is over the bytes as sent, not over a re-serialisation.
    const body = JSON.stringify(BATCH, null, 2);
    logs.takeKeys();
    const r = await postRaw(t.app, URL, body, signed(body));
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { status: 'success', message: { received: 5 } });
    assert.deepEqual(logs.takeKeys(), ['6g4ZI7SA-xmRDv57GoPIPw==', 'blocked-event-1', 'full-event-1', 'dropped-event-1', 'spam-event-1']);
  });

  it('answers 401 and takes in nothing for a wrong, altered, foreign-key or missing signature', async () => {
    const body = JSON.stringify(BATCH);
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    logs.takeKeys();
    const cases: Array<[string, Record<string, string>]> = [
      [body.replace('gone@', 'else@'), signed(body)],
      [body, { ...signed(body), 'x-twilio-email-event-webhook-timestamp': '1700000001' }],
      [body, signed(body, '1700000000', other)],
      [body, { 'x-twilio-email-event-webhook-signature': 'AAAA', 'x-twilio-email-event-webhook-timestamp': '1' }],
      [body, {}],
    ];
    for (const [payload, headers] of cases) {
      const r = await postRaw(t.app, URL, payload, headers);
      assert.equal(r.status, 401);
      assert.deepEqual(r.body, { status: 'failed', errors: 'The SendGrid signature does not verify.' });
    }
    assert.deepEqual(logs.takeKeys(), []);
  });

  it('answers 400 for a signed body that is not JSON or not an array, never 5xx', async () => {
    for (const body of ['{not json', '{"event":"bounce"}', '"text"', '']) {
      const r = await postRaw(t.app, URL, body, signed(body));
      assert.ok(r.status === 400 || r.status === 401, `${JSON.stringify(body)}: ${r.status}`);
      assert.equal(r.body.status, 'failed');
    }
    const r = await postRaw(t.app, URL, '{"event":"bounce"}', signed('{"event":"bounce"}'));
    assert.deepEqual(r.body, { status: 'failed', errors: 'A SendGrid Event Webhook payload is a JSON array of events.' });
  });

  it('takes a body whatever its content type (the signature is over its bytes)', async () => {
    const body = JSON.stringify([BATCH[6]]);
    const r = await postRaw(t.app, URL, body, { ...signed(body), 'content-type': 'text/plain' });
    assert.deepEqual(r.body, { status: 'success', message: { received: 1 } });
  });
});
