import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { originalMessageId, postmarkEvents, verifyPostmarkAuth } from '../../src/inbound/postmark.js';
import { parseJsonBody } from '../../src/inbound/relay-input.js';
import { setup, type TestContext } from '../helpers.js';
import { logCatcher, postRaw } from './relay-support.js';

const AUTH = 'postmark:s3cret-pass';
const basic = (s: string) => ({ authorization: 'Basic ' + Buffer.from(s).toString('base64') });

/** A bounce dump: the bounce's own headers, then the DSN with the original headers returned. */
const DUMP = [
  'Return-Path: <>',
  'Message-ID: <bounce-1@mx.example.net>',
  'From: Mail Delivery System <MAILER-DAEMON@mx.example.net>',
  'Content-Type: multipart/report; report-type=delivery-status; boundary="b1"',
  '',
  '--b1',
  'Content-Type: text/plain',
  '',
  'The mail could not be delivered.',
  '--b1',
  'Content-Type: text/rfc822-headers',
  '',
  'From: Shop <news@shop.example.com>',
  'To: john@example.com',
  'Message-ID:',
  ' <Ab12Cd34.77@mail.shop.example.com>',
  'Subject: Spring sale',
  '--b1--',
].join('\r\n');

/** A Bounce record in the shape of Postmark's webhook documentation. */
function bounce(type: string, typeCode: number, overrides: Record<string, unknown> = {}) {
  return {
    RecordType: 'Bounce',
    MessageStream: 'outbound',
    ID: 692560173,
    Type: type,
    TypeCode: typeCode,
    Name: 'Hard bounce',
    Tag: 'Test',
    MessageID: '883953f4-6105-42a2-a16a-77a8eac79483',
    Metadata: { message_ref: '2n-0123456789abcdef' },
    ServerID: 23,
    Description: 'The server was unable to deliver your message (ex: unknown user, mailbox not found).',
    Details: 'smtp;550 5.1.1 The email account that you tried to reach does not exist.',
    Email: 'john@example.com',
    From: 'news@shop.example.com',
    BouncedAt: '2019-11-05T16:33:54.9070259Z',
    DumpAvailable: true,
    Inactive: true,
    CanActivate: true,
    Subject: 'Spring sale',
    Content: DUMP,
    ...overrides,
  };
}

const complaint = {
  RecordType: 'SpamComplaint',
  MessageStream: 'outbound',
  ID: 42,
  Type: 'SpamComplaint',
  TypeCode: 512,
  Name: 'Spam complaint',
  Tag: 'Test',
  MessageID: '00000000-0000-0000-0000-000000000000',
  Metadata: { message_ref: '2o-fedcba9876543210' },
  ServerID: 1234,
  Description: 'The subscriber explicitly marked this message as spam.',
  Details: 'Test spam complaint details',
  Email: 'john@example.com',
  From: 'sender@example.com',
  BouncedAt: '2019-11-05T16:33:54.9070259Z',
  DumpAvailable: true,
  Inactive: true,
  CanActivate: false,
  Subject: 'Test subject',
};

describe('postmarkEvents', () => {
  it('a HardBounce is hard, named by the VERP token in Metadata and the original Message-ID in Content', () => {
    assert.deepEqual(postmarkEvents(bounce('HardBounce', 1, { ID: '4323372036854775807' })), [
      {
        source: 'postmark',
        kind: 'bounce',
        type: 'hard',
        email: 'john@example.com',
        verp: '2n-0123456789abcdef',
        messageId: 'Ab12Cd34.77@mail.shop.example.com',
        eventKey: '4323372036854775807',
        reason:
          'smtp;550 5.1.1 The email account that you tried to reach does not exist. The server was unable to deliver your message (ex: unknown user, mailbox not found).',
      },
    ]);
  });

  it('maps the bounce types: soft ones soft, a transient delay and non-failures left out', () => {
    const kinds = (type: string) => postmarkEvents(bounce(type, 0)).map((e) => `${e.kind}:${e.type}`);
    assert.deepEqual(kinds('BadEmailAddress'), ['bounce:hard']);
    for (const soft of ['SoftBounce', 'DnsError', 'Blocked', 'SpamNotification', 'DMARCPolicy', 'Unknown'])
      assert.deepEqual(kinds(soft), ['bounce:soft'], soft);
    for (const none of ['Transient', 'AutoResponder', 'AddressChange', 'Subscribe', 'Unsubscribe', 'ManuallyDeactivated', 'toString']) {
      assert.deepEqual(kinds(none), [], none);
    }
  });

  it('a SpamComplaint record is a complaint; without Content it is named by the VERP token only', () => {
    assert.deepEqual(postmarkEvents(complaint), [
      {
        source: 'postmark',
        kind: 'complaint',
        type: null,
        email: 'john@example.com',
        verp: '2o-fedcba9876543210',
        messageId: null,
        eventKey: '42',
        reason: 'The subscriber explicitly marked this message as spam.',
      },
    ]);
  });

  it('reads a 64-bit ID exactly from the body, where JSON numbers would round it', () => {
    const body = Buffer.from(JSON.stringify({ ...bounce('HardBounce', 1), ID: 0 }).replace('"ID":0', '"ID": 4323372036854775807'));
    assert.equal(postmarkEvents(parseJsonBody(body, ['ID']))[0].eventKey, '4323372036854775807');
    const tricky = Buffer.from(JSON.stringify({ ...bounce('HardBounce', 1), Details: '"ID": 5', ID: 7 }));
    assert.deepEqual(parseJsonBody(tricky, ['ID']), { ...bounce('HardBounce', 1), Details: '"ID": 5', ID: '7' });
  });

  it('reads the Message-ID of a dump that is only the original headers', () => {
    assert.equal(originalMessageId('From: a@b.c\r\nMessage-ID: <x.1@host>\r\n'), 'x.1@host');
    assert.equal(originalMessageId(''), null);
    assert.equal(originalMessageId(undefined), null);
  });

  it('refuses a payload that is no record', () => {
    for (const p of [null, [], {}, { RecordType: '' }]) assert.throws(() => postmarkEvents(p), { statusCode: 400 });
  });

  it('checks basic auth against user:password', () => {
    assert.equal(verifyPostmarkAuth(basic(AUTH).authorization, AUTH), true);
    assert.equal(verifyPostmarkAuth(basic('postmark:wrong').authorization, AUTH), false);
    assert.equal(verifyPostmarkAuth(basic(AUTH + 'x').authorization, AUTH), false);
    assert.equal(verifyPostmarkAuth('Bearer ' + AUTH, AUTH), false);
    assert.equal(verifyPostmarkAuth(undefined, AUTH), false);
  });
});

describe('POST /inbound/postmark', () => {
  let t: TestContext;
  const logs = logCatcher();
  const URL = '/inbound/postmark';
  before(async () => {
    t = await setup({ postmarkWebhookAuth: AUTH }, { logger: logs.logger });
  });
  after(() => t.close());

  it('takes in a bounce and a complaint with the right credentials', async () => {
    logs.takeKeys();
    // The ID as Postmark sends it: a 64-bit integer, read exactly.
    const body = JSON.stringify(bounce('HardBounce', 1, { ID: 0 })).replace('"ID":0', '"ID":4323372036854775807');
    let r = await postRaw(t.app, URL, body, basic(AUTH));
    assert.deepEqual(r.body, { status: 'success', message: { received: 1 } });
    r = await postRaw(t.app, URL, JSON.stringify(complaint), basic(AUTH));
    assert.deepEqual(r.body, { status: 'success', message: { received: 1 } });
    r = await postRaw(t.app, URL, JSON.stringify(bounce('Transient', 2)), basic(AUTH));
    assert.deepEqual(r.body, { status: 'success', message: { received: 0 } });
    assert.deepEqual(logs.takeKeys(), ['4323372036854775807', '42']);
  });

  it('answers 401 with a Basic challenge and takes in nothing for wrong or missing credentials', async () => {
    logs.takeKeys();
    for (const headers of [basic('postmark:wrong'), basic('other:s3cret-pass'), {}, { authorization: 'Basic !!!' }]) {
      const r = await postRaw(t.app, URL, JSON.stringify(bounce('HardBounce', 1)), headers);
      assert.equal(r.status, 401);
      assert.deepEqual(r.body, { status: 'failed', errors: 'Invalid webhook credentials.' });
      assert.equal(r.headers['www-authenticate'], 'Basic realm="postmark"');
    }
    assert.deepEqual(logs.takeKeys(), []);
  });

  it('answers 400 for malformed bodies, never 5xx', async () => {
    for (const body of ['{', '[]', 'null', '{"Email":"a@b.c"}', '']) {
      const r = await postRaw(t.app, URL, body, basic(AUTH));
      assert.equal(r.status, 400, body);
      assert.equal(r.body.status, 'failed');
    }
  });
});
