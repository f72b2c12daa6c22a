import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mailgunEvents, verifyMailgun } from '../../src/inbound/mailgun.js';
import { setup, type TestContext } from '../helpers.js';
import { logCatcher, postRaw } from './relay-support.js';

const KEY = 'key-3ax6xnjp29jd6fds4gc373sgvjxteol0';

/** Mailgun's signature object for `timestamp` and `token` under `key`. */
function signature(key = KEY, timestamp = '1529006854', token = 'a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0') {
  return {
    timestamp,
    token,
    signature: createHmac('sha256', key)
      .update(timestamp + token)
      .digest('hex'),
  };
}

/** A `failed` event in the shape of Mailgun's webhook documentation. */
function failed(severity: string, overrides: Record<string, unknown> = {}) {
  return {
    event: 'failed',
    id: `G9Bn5sl1TC6dzvm0qEk4RA-${severity}`,
    timestamp: 1521472262.908181,
    'log-level': severity === 'permanent' ? 'error' : 'warn',
    severity,
    reason: 'bounce',
    recipient: 'alice@example.com',
    'recipient-domain': 'example.com',
    envelope: { sender: 'bob@mg.example.com', transport: 'smtp', targets: 'alice@example.com' },
    message: {
      headers: {
        to: 'Alice <alice@example.com>',
        'message-id': '<Xq0mK3r2.17@mail.example.com>',
        from: 'Bob <bob@mg.example.com>',
        subject: 'Spring sale',
      },
      attachments: [],
      size: 111,
    },
    'delivery-status': {
      'attempt-no': 1,
      message: '550 5.1.1 The email account that you tried to reach does not exist.',
      code: 550,
      description: '',
      'session-seconds': 0.4,
    },
    flags: { 'is-routed': false, 'is-authenticated': true, 'is-system-test': false, 'is-test-mode': false },
    tags: [],
    'user-variables': {},
    ...overrides,
  };
}

const complained = {
  event: 'complained',
  id: '-Agny091SquKnsrW2NEKUA',
  timestamp: 1521233123.501324,
  'log-level': 'warn',
  recipient: 'carol@example.com',
  message: { headers: { 'message-id': 'Yz81.18@mail.example.com' }, attachments: [], size: 111 },
  flags: { 'is-test-mode': false },
};

describe('mailgunEvents', () => {
  it('a permanent failure is a bounce, hard when the answer says the address is gone, matched by message-id', () => {
    assert.deepEqual(mailgunEvents({ signature: signature(), 'event-data': failed('permanent') }), [
      {
        source: 'mailgun',
        kind: 'bounce',
        type: 'hard',
        email: 'alice@example.com',
        messageId: 'Xq0mK3r2.17@mail.example.com',
        eventKey: 'G9Bn5sl1TC6dzvm0qEk4RA-permanent',
        reason: '550 550 5.1.1 The email account that you tried to reach does not exist.',
      },
    ]);
  });

  it('a permanent refusal for policy is soft; Mailgun refusing a suppressed bounced address is hard', () => {
    const policy = failed('permanent', { 'delivery-status': { code: 554, message: '5.7.1 Message rejected as spam', description: '' } });
    assert.equal(mailgunEvents({ 'event-data': policy })[0].type, 'soft');
    const suppressed = failed('permanent', {
      reason: 'suppress-bounce',
      'delivery-status': { code: 605, message: '', description: 'Not delivering to previously bounced address' },
    });
    assert.deepEqual(
      mailgunEvents({ 'event-data': suppressed }).map((e) => [e.type, e.reason]),
      [['hard', '605 Not delivering to previously bounced address']],
    );
  });

  it('a temporary failure (Mailgun retries) and other events are left out; a complaint is a complaint', () => {
    assert.deepEqual(mailgunEvents({ 'event-data': failed('temporary') }), []);
    assert.deepEqual(mailgunEvents({ 'event-data': { event: 'delivered', recipient: 'a@example.com' } }), []);
    assert.deepEqual(mailgunEvents({ 'event-data': complained }), [
      {
        source: 'mailgun',
        kind: 'complaint',
        type: null,
        email: 'carol@example.com',
        messageId: 'Yz81.18@mail.example.com',
        eventKey: '-Agny091SquKnsrW2NEKUA',
        reason: 'Spam complaint',
      },
    ]);
  });

  it('refuses a payload without event-data', () => {
    for (const p of [null, [], {}, { 'event-data': 'x' }]) assert.throws(() => mailgunEvents(p), { statusCode: 400 });
  });

  it('verifies the HMAC of timestamp and token with the signing key', () => {
    assert.equal(verifyMailgun({ signature: signature() }, KEY), true);
    assert.equal(verifyMailgun({ signature: signature('other-key') }, KEY), false);
    assert.equal(verifyMailgun({ signature: { ...signature(), token: 'another' } }, KEY), false);
    assert.equal(verifyMailgun({ signature: { ...signature(), signature: 'abc' } }, KEY), false);
    assert.equal(verifyMailgun({}, KEY), false);
    assert.equal(verifyMailgun(null, KEY), false);
  });
});

describe('POST /inbound/mailgun', () => {
  let t: TestContext;
  const logs = logCatcher();
  const URL = '/inbound/mailgun';
  before(async () => {
    t = await setup({ mailgunWebhookSigningKey: KEY }, { logger: logs.logger });
  });
  after(() => t.close());

  it('takes in a signed permanent failure and a signed complaint', async () => {
    logs.takeKeys();
    let r = await postRaw(t.app, URL, JSON.stringify({ signature: signature(), 'event-data': failed('permanent') }));
    assert.deepEqual(r.body, { status: 'success', message: { received: 1 } });
    r = await postRaw(t.app, URL, JSON.stringify({ signature: signature(), 'event-data': complained }));
    assert.deepEqual(r.body, { status: 'success', message: { received: 1 } });
    r = await postRaw(t.app, URL, JSON.stringify({ signature: signature(), 'event-data': failed('temporary') }));
    assert.deepEqual(r.body, { status: 'success', message: { received: 0 } });
    assert.deepEqual(logs.takeKeys(), ['G9Bn5sl1TC6dzvm0qEk4RA-permanent', '-Agny091SquKnsrW2NEKUA']);
  });

  it('answers 401 and takes in nothing for a wrong or missing signature', async () => {
    logs.takeKeys();
    for (const sig of [signature('another-key'), { ...signature(), timestamp: '1529006855' }, undefined, 'text']) {
      const r = await postRaw(t.app, URL, JSON.stringify({ signature: sig, 'event-data': failed('permanent') }));
      assert.equal(r.status, 401);
      assert.deepEqual(r.body, { status: 'failed', errors: 'The Mailgun signature does not verify.' });
    }
    assert.deepEqual(logs.takeKeys(), []);
  });

  it('answers 400 for a body that is not JSON, and for a signed payload without event-data; never 5xx', async () => {
    let r = await postRaw(t.app, URL, '{"signature":');
    assert.deepEqual(r.body, { status: 'failed', errors: 'The request body is not valid JSON.' });
    r = await postRaw(t.app, URL, JSON.stringify({ signature: signature() }));
    assert.equal(r.status, 400);
    for (const body of ['[]', 'null', '12', JSON.stringify({ signature: signature(), 'event-data': [] })]) {
      r = await postRaw(t.app, URL, body);
      assert.ok(r.status === 400 || r.status === 401, `${body}: ${r.status}`);
    }
  });
});
