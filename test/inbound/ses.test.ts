import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CertificateUnavailable,
  confirmSubscription,
  isSnsUrl,
  sesEvents,
  snsCertificates,
  snsMessageOf,
  snsStringToSign,
  verifySnsSignature,
  type SnsMessage,
} from '../../src/inbound/ses.js';
import { BadSignature } from '../../src/inbound/relay-input.js';
import { setup, type TestContext } from '../helpers.js';
import { logCatcher, postRaw } from './relay-support.js';

const CERT_URL = 'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-01d088a6f77103d0fe307c0069e40ed6.pem';
const TOPIC = 'arn:aws:sns:us-east-1:123456789012:ses-bounces';

/** An SES bounce notification in the shape of the SES developer guide (identity notifications). */
const BOUNCE = {
  notificationType: 'Bounce',
  bounce: {
    bounceType: 'Permanent',
    bounceSubType: 'General',
    bouncedRecipients: [
      { emailAddress: 'jane@example.com', action: 'failed', status: '5.1.1', diagnosticCode: 'smtp; 550 5.1.1 user unknown' },
      {
        emailAddress: 'Richard Roe <richard@example.com>',
        action: 'failed',
        status: '5.1.1',
        diagnosticCode: 'smtp; 550 5.1.1 user unknown',
      },
    ],
    timestamp: '2016-01-27T14:59:38.237Z',
    feedbackId: '00000138111222aa-33322211-cccc-cccc-cccc-ddddaaaa0680-000000',
    remoteMtaIp: '127.0.2.0',
    reportingMTA: 'dns; email.example.com',
  },
  mail: {
    timestamp: '2016-01-27T14:59:38.237Z',
    source: 'john@example.com',
    sourceArn: 'arn:aws:ses:us-east-1:888888888888:identity/example.com',
    sourceIp: '127.0.3.0',
    sendingAccountId: '123456789012',
    messageId: '00000138111222aa-33322211-cccc-cccc-cccc-ddddaaaa0680-000000',
    destination: ['jane@example.com', 'mary@example.com', 'richard@example.com'],
    headersTruncated: false,
    headers: [
      { name: 'From', value: '"John Doe" <john@example.com>' },
      { name: 'To', value: '"Jane Doe" <jane@example.com>, "Mary Doe" <mary@example.com>, "Richard Doe" <richard@example.com>' },
      { name: 'Message-ID', value: '<Kq7x.31@mail.example.com>' },
      { name: 'Subject', value: 'Hello' },
    ],
    commonHeaders: {
      from: ['John Doe <john@example.com>'],
      date: 'Wed, 27 Jan 2016 14:05:45 +0000',
      to: ['Jane Doe <jane@example.com>, Mary Doe <mary@example.com>, Richard Doe <richard@example.com>'],
      messageId: '<Kq7x.31@mail.example.com>',
      subject: 'Hello',
    },
  },
};

/** An SES complaint, as an event-publishing record (`eventType`), its Message-ID only among the headers. */
const COMPLAINT = {
  eventType: 'Complaint',
  complaint: {
    complainedRecipients: [{ emailAddress: 'recipient@example.com' }],
    timestamp: '2017-08-05T00:41:02.669Z',
    feedbackId: '01000157c44f053b-61b59c11-9236-11e6-8f96-7be8aexample-000000',
    userAgent: 'Mozilla/5.0',
    complaintFeedbackType: 'abuse',
    arrivalDate: '2017-08-05T00:41:02.669Z',
  },
  mail: {
    timestamp: '2017-08-05T00:40:01.123Z',
    source: 'Sender Name <sender@example.com>',
    messageId: 'EXAMPLE7c191be45-e9aedb9a-02f9-4d12-a87d-dd0099a07f8a-000000',
    headers: [{ name: 'Message-ID', value: '<Zz9.32@mail.example.com>' }],
    commonHeaders: { from: ['Sender Name <sender@example.com>'], subject: 'Message sent from Amazon SES' },
  },
};

describe('sesEvents', () => {
  it('a Permanent bounce is hard, one event per bounced recipient, keyed by feedbackId and recipient', () => {
    const key = (email: string) => `${BOUNCE.bounce.feedbackId}:${email}`;
    assert.deepEqual(sesEvents(BOUNCE), [
      {
        source: 'ses',
        kind: 'bounce',
        type: 'hard',
        email: 'jane@example.com',
        messageId: 'Kq7x.31@mail.example.com',
        reason: 'smtp; 550 5.1.1 user unknown 5.1.1',
        eventKey: key('jane@example.com'),
      },
      {
        source: 'ses',
        kind: 'bounce',
        type: 'hard',
        email: 'richard@example.com',
        messageId: 'Kq7x.31@mail.example.com',
        reason: 'smtp; 550 5.1.1 user unknown 5.1.1',
        eventKey: key('richard@example.com'),
      },
    ]);
  });

  it('Transient and Undetermined bounces are soft', () => {
    for (const bounceType of ['Transient', 'Undetermined']) {
      const n = {
        ...BOUNCE,
        bounce: { ...BOUNCE.bounce, bounceType, bounceSubType: 'MailboxFull', bouncedRecipients: [{ emailAddress: 'a@example.com' }] },
      };
      assert.deepEqual(
        sesEvents(n).map((e) => [e.type, e.reason]),
        [['soft', `${bounceType} MailboxFull`]],
      );
    }
  });

  it('a complaint (event publishing) is a complaint, matched by the Message-ID among mail.headers', () => {
    assert.deepEqual(sesEvents(COMPLAINT), [
      {
        source: 'ses',
        kind: 'complaint',
        type: null,
        email: 'recipient@example.com',
        messageId: 'Zz9.32@mail.example.com',
        reason: 'Spam complaint abuse',
        eventKey: `${COMPLAINT.complaint.feedbackId}:recipient@example.com`,
      },
    ]);
  });

  it('deliveries and unknown notifications give nothing; a Message that is no object is refused', () => {
    assert.deepEqual(sesEvents({ notificationType: 'Delivery', mail: BOUNCE.mail, delivery: {} }), []);
    assert.deepEqual(sesEvents({ notificationType: 'Bounce', bounce: { bouncedRecipients: 'x' } }), []);
    for (const n of [null, [], 'Bounce']) assert.throws(() => sesEvents(n), { statusCode: 400 });
  });
});

describe('SNS signatures and certificates', () => {
  it('builds the canonical string of each message type in AWS order, Subject only when present', () => {
    const n = {
      Type: 'Notification',
      MessageId: 'm1',
      TopicArn: 't',
      Message: 'hi',
      Timestamp: 'ts',
      Subject: 's',
      SignatureVersion: '1',
    } as SnsMessage;
    assert.equal(snsStringToSign(n), 'Message\nhi\nMessageId\nm1\nSubject\ns\nTimestamp\nts\nTopicArn\nt\nType\nNotification\n');
    const { Subject: _s, ...noSubject } = n;
    assert.equal(snsStringToSign(noSubject as SnsMessage), 'Message\nhi\nMessageId\nm1\nTimestamp\nts\nTopicArn\nt\nType\nNotification\n');
    const c = {
      Type: 'SubscriptionConfirmation',
      MessageId: 'm',
      Token: 'tok',
      TopicArn: 't',
      Message: 'msg',
      SubscribeURL: 'u',
      Timestamp: 'ts',
    } as SnsMessage;
    assert.equal(
      snsStringToSign(c),
      'Message\nmsg\nMessageId\nm\nSubscribeURL\nu\nTimestamp\nts\nToken\ntok\nTopicArn\nt\nType\nSubscriptionConfirmation\n',
    );
  });

  it('trusts only https URLs on an sns.<region>.amazonaws.com host', () => {
    assert.equal(isSnsUrl(CERT_URL), true);
    assert.equal(isSnsUrl('https://sns.eu-west-3.amazonaws.com/?Action=ConfirmSubscription&Token=x'), true);
    for (const bad of [
      'http://sns.us-east-1.amazonaws.com/cert.pem',
      'https://sns.us-east-1.amazonaws.com.evil.example/cert.pem',
      'https://evil.example/sns.us-east-1.amazonaws.com/cert.pem',
      'https://s3.amazonaws.com/cert.pem',
      'https://sns.us-east-1.amazonaws.com:8443/cert.pem',
      'https://user@sns.us-east-1.amazonaws.com/cert.pem',
      'file:///etc/passwd',
      'not a url',
      42,
    ]) {
      assert.equal(isSnsUrl(bad), false, String(bad));
    }
  });

  it('fetches a certificate only from an SNS URL, keeps it, and tells a network failure from a bad answer', async () => {
    const fetched: string[] = [];
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const certs = snsCertificates(null, async (url) => {
      fetched.push(url);
      if (url.includes('down')) throw new Error('ETIMEDOUT');
      return url.includes('missing') ? { status: 404, text: 'Not Found' } : { status: 200, text: pem };
    });
    assert.equal(await certs(CERT_URL), pem);
    assert.equal(await certs(CERT_URL), pem);
    await assert.rejects(certs('https://evil.example/cert.pem'), BadSignature);
    await assert.rejects(certs('https://sns.us-east-1.amazonaws.com/missing.pem'), BadSignature);
    await assert.rejects(certs('https://sns.us-east-1.amazonaws.com/down.pem'), CertificateUnavailable);
    assert.deepEqual(fetched, [
      CERT_URL,
      'https://sns.us-east-1.amazonaws.com/missing.pem',
      'https://sns.us-east-1.amazonaws.com/down.pem',
    ]);
  });

  it('confirms a subscription by fetching its SubscribeURL, only an SNS one', async () => {
    const fetched: string[] = [];
    const fetcher = async (url: string) => (fetched.push(url), { status: 200, text: '<ConfirmSubscriptionResponse/>' });
    const msg = (SubscribeURL: string) => ({ Type: 'SubscriptionConfirmation', SubscribeURL }) as SnsMessage;
    const good = 'https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=x&Token=y';
    assert.equal(await confirmSubscription(msg(good), fetcher), 'confirmed');
    assert.equal(await confirmSubscription(msg('https://evil.example/?Action=ConfirmSubscription'), fetcher), 'refused');
    assert.equal(await confirmSubscription(msg(good), async () => ({ status: 403, text: '' })), 'failed');
    assert.deepEqual(fetched, [good]);
  });

  it('refuses SNS bodies without a known Type or with non-text signed fields', () => {
    for (const p of [null, [], {}, { Type: 'Other' }, { Type: 'Notification', Message: {} }, { Type: 'toString' }]) {
      assert.throws(() => snsMessageOf(p), { statusCode: 400 }, JSON.stringify(p));
    }
  });
});

describe('POST /inbound/ses', () => {
  let t: TestContext;
  let dir: string;
  let key: KeyObject;
  let certPem: string;
  const logs = logCatcher();
  const URL = '/inbound/ses';

  /** An SNS message of `type` with `fields`, signed as SNS signs it (version 1: SHA1withRSA, 2: SHA256withRSA). */
  function snsMessage(type: string, fields: Record<string, string>, version = '1', signingKey: KeyObject = key) {
    const m: Record<string, string> = {
      Type: type,
      MessageId: '22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324',
      TopicArn: TOPIC,
      Timestamp: '2012-05-02T00:54:06.655Z',
      SignatureVersion: version,
      SigningCertURL: CERT_URL,
      ...fields,
    };
    const digest = version === '2' ? 'sha256' : 'sha1';
    m.Signature = sign(digest, Buffer.from(snsStringToSign(m as SnsMessage)), signingKey).toString('base64');
    return m;
  }
  const notification = (ses: object, version = '1') =>
    snsMessage(
      'Notification',
      { Message: JSON.stringify(ses), UnsubscribeURL: 'https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe' },
      version,
    );

  before(async () => {
    // node:crypto reads X.509 certificates but does not make them: openssl makes a self-signed one.
    dir = mkdtempSync(join(tmpdir(), 'sns-cert-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '2',
        '-subj',
        '/CN=sns.amazonaws.com',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    key = createPrivateKey(readFileSync(join(dir, 'key.pem')));
    certPem = readFileSync(join(dir, 'cert.pem'), 'utf8');
    t = await setup({ sesWebhook: true, snsCertFile: join(dir, 'cert.pem') }, { logger: logs.logger });
  });
  after(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('verifies signatures of version 1 (SHA1withRSA) and 2 (SHA256withRSA) with the certificate', () => {
    for (const v of ['1', '2']) {
      const m = notification(BOUNCE, v) as SnsMessage;
      assert.equal(verifySnsSignature(m, certPem), true, v);
      assert.equal(verifySnsSignature({ ...m, Message: m.Message.replace('jane', 'joan') }, certPem), false, v);
      assert.equal(verifySnsSignature({ ...m, SignatureVersion: v === '1' ? '2' : '1' }, certPem), false, v);
    }
    assert.equal(verifySnsSignature({ ...(notification(BOUNCE) as SnsMessage), SignatureVersion: '3' }, certPem), false);
    assert.equal(verifySnsSignature(notification(BOUNCE) as SnsMessage, 'not a certificate'), false);
  });

  it('takes in the bounces of a signed notification, version 1 or 2, sent as text/plain as SNS does', async () => {
    for (const v of ['1', '2']) {
      logs.takeKeys();
      const r = await postRaw(t.app, URL, JSON.stringify(notification(BOUNCE, v)), { 'content-type': 'text/plain; charset=UTF-8' });
      assert.deepEqual(r.body, { status: 'success', message: { received: 2 } }, v);
      assert.deepEqual(logs.takeKeys(), [
        `${BOUNCE.bounce.feedbackId}:jane@example.com`,
        `${BOUNCE.bounce.feedbackId}:richard@example.com`,
      ]);
    }
    const r = await postRaw(t.app, URL, JSON.stringify(notification(COMPLAINT)));
    assert.deepEqual(r.body, { status: 'success', message: { received: 1 } });
  });

  it('answers 401 and takes in nothing for an altered message, a foreign key or an unknown signature version', async () => {
    const other = createPrivateKey(execFileSync('openssl', ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:1024']));
    const altered = { ...notification(BOUNCE), TopicArn: 'arn:aws:sns:us-east-1:999999999999:other' };
    const foreign = snsMessage('Notification', { Message: JSON.stringify(BOUNCE) }, '1', other);
    const v3 = { ...notification(BOUNCE), SignatureVersion: '3' };
    logs.takeKeys();
    for (const m of [altered, foreign, v3, { ...notification(BOUNCE), Signature: '' }]) {
      const r = await postRaw(t.app, URL, JSON.stringify(m));
      assert.equal(r.status, 401);
      assert.deepEqual(r.body, { status: 'failed', errors: 'The SNS signature does not verify.' });
    }
    assert.deepEqual(logs.takeKeys(), []);
  });

  it('refuses a SigningCertURL that is not https on an sns.<region>.amazonaws.com host, before any fetch', async () => {
    for (const url of [
      'https://evil.example/cert.pem',
      'http://sns.us-east-1.amazonaws.com/cert.pem',
      'https://sns.us-east-1.amazonaws.com.evil.example/c.pem',
    ]) {
      const r = await postRaw(t.app, URL, JSON.stringify({ ...notification(BOUNCE), SigningCertURL: url }));
      assert.equal(r.status, 401, url);
      assert.deepEqual(r.body, {
        status: 'failed',
        errors: 'The SNS signing certificate must come from an https://sns.<region>.amazonaws.com URL.',
      });
    }
  });

  it('verifies a subscription confirmation and fetches only an SNS SubscribeURL', async () => {
    logs.lines.length = 0;
    const m = snsMessage('SubscriptionConfirmation', {
      Token:
        '2336412f37fb687f5d51e6e241d09c805a5a57b30d712f794cc5f6a988666d92768dd60a747ba6f3beb71854e285d6ad02428b09ceece29417f1f02d609c582afbacc99c583a916b9981dd2728f4ae6fdb82efd087cc3b7849e05798d2d2785c03b0879594eeac82c01f235d0e717736',
      Message: `You have chosen to subscribe to the topic ${TOPIC}.\nTo confirm the subscription, visit the SubscribeURL included in this message.`,
      SubscribeURL: 'https://evil.example/?Action=ConfirmSubscription',
    });
    const r = await postRaw(t.app, URL, JSON.stringify(m), { 'content-type': 'text/plain' });
    assert.deepEqual(r.body, { status: 'success', message: { received: 0 } });
    const line = logs.lines.find((l) => l.msg === 'SNS subscription confirmation');
    assert.equal(line?.outcome, 'refused');
    assert.equal(line?.topic, TOPIC);
    const forged = { ...m, SubscribeURL: 'https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&Token=other' };
    assert.equal((await postRaw(t.app, URL, JSON.stringify(forged))).status, 401);
  });

  it('answers 400 for malformed bodies and a signed Message that is not JSON, never 5xx', async () => {
    for (const body of ['{', '[]', '"x"', '{"Type":"Notification"}', JSON.stringify({ ...notification(BOUNCE), Message: 5 }), '']) {
      const r = await postRaw(t.app, URL, body);
      assert.equal(r.status, 400, body);
    }
    const r = await postRaw(t.app, URL, JSON.stringify(snsMessage('Notification', { Message: 'plain text' })));
    assert.deepEqual(r.body, { status: 'failed', errors: 'The SNS Message is not JSON: not an SES notification.' });
  });
});
