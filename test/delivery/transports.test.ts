import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dkimVerify } from 'mailauth';
import { TransportError, type MailMessage } from '../../src/delivery/transport.js';
import { createTransport, outboxTransport, smtpTransport, systemFrom, toTransportError } from '../../src/delivery/transports.js';
import { parseMessage, SmtpSink } from '../support/smtp-sink.js';

const message = (to: string, extra: Partial<MailMessage> = {}): MailMessage => ({
  from: { name: 'Zoë Sender', address: 'zoe@example.com' },
  to,
  replyTo: 'replies@example.com',
  subject: 'Grüße from the test',
  text: 'Plain body ✓',
  html: '<p>HTML body ✓</p>',
  headers: { 'X-Campaign': 'c-42' },
  ...extra,
});

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const dkimKey = () => generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

/** A DKIM key pair: the private key as configured, and a DNS resolver serving its public key at `<selector>._domainkey.<domain>`. */
function dkimPair(domain: string, selector: string) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const txt = `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`;
  const resolver = async (name: string, type: string) => {
    if (type === 'TXT' && name === `${selector}._domainkey.${domain}`) return [[txt]];
    throw Object.assign(new Error(`no ${type} record for ${name}`), { code: 'ENOTFOUND' });
  };
  return { dkim: { domain, selector, privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }, resolver };
}

/** A campaign mail as the queue hands it over: one-click unsubscribe headers, a reply-to, a message id. */
const campaignMessage = (to: string) =>
  message(to, {
    messageId: `m.${to.split('@')[0]}@example.org`,
    headers: {
      'List-Unsubscribe': '<http://localhost:3000/u/abc.def>, <mailto:replies@example.com?subject=unsubscribe%20abc.def>',
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    },
  });

/** The fields a receiver relies on, each of which must be in the signature's `h=`. */
const MUST_BE_SIGNED = [
  'from',
  'to',
  'subject',
  'date',
  'message-id',
  'reply-to',
  'mime-version',
  'content-type',
  'list-unsubscribe',
  'list-unsubscribe-post',
];

/** Verifies the message's DKIM signature with an independent verifier (mailauth); returns the signed field names. */
async function verifiedSignedFields(raw: string, resolver: ReturnType<typeof dkimPair>['resolver'], domain: string) {
  const { results } = await dkimVerify(Buffer.from(raw), { resolver });
  assert.equal(results.length, 1, 'one signature');
  const [r] = results;
  assert.equal(r.status.result, 'pass', `DKIM verification: ${r.status.comment}`);
  assert.equal(r.signingDomain, domain);
  // What the verifier hashed (mailauth returns it, its types leave it out): the signature's h= list.
  const { signingHeaders } = r as typeof r & { signingHeaders: { keys: string } };
  return signingHeaders.keys.split(':').map((k) => k.trim().toLowerCase());
}

describe('SMTP transport', () => {
  let sink: SmtpSink;
  before(async () => {
    sink = await SmtpSink.start();
  });
  after(() => sink.close());

  it('delivers a message to the SMTP server with its headers, text and html', async () => {
    const t = smtpTransport(sink.url, null);
    try {
      const res = await t.send(message('rcpt@example.net', { messageId: 'abc.123@example.com' }));
      assert.equal(res.messageId, 'abc.123@example.com');
      assert.match(res.response, /^250/);
      const m = await sink.waitFor((x) => x.envelope.to.includes('rcpt@example.net'));
      assert.equal(m.envelope.from, 'zoe@example.com');
      assert.equal(m.subject, 'Grüße from the test');
      assert.equal(m.header('message-id'), '<abc.123@example.com>');
      assert.equal(m.header('reply-to'), 'replies@example.com');
      assert.equal(m.header('x-campaign'), 'c-42');
      assert.match(m.header('from')!, /Zoë Sender.*<zoe@example\.com>/);
      assert.equal(m.text?.trim(), 'Plain body ✓');
      assert.equal(m.html?.trim(), '<p>HTML body ✓</p>');
    } finally {
      await t.close();
    }
  });

  it('logs in with the credentials given in SMTP_URL', async () => {
    const t = createTransport({ smtpUrl: sink.urlWith('mailer@example.com', 'p@ss:word'), outboxDir: '/nonexistent', dkim: null });
    try {
      await t.send(message('auth@example.net'));
      const m = await sink.waitFor((x) => x.envelope.to.includes('auth@example.net'));
      assert.equal(m.user, 'mailer@example.com');
    } finally {
      await t.close();
    }
  });

  it('turns a 5xx refusal (at RCPT or after DATA) into a permanent TransportError, a 4xx or a dropped connection into a temporary one', async () => {
    sink.reject('gone@example.net', 550, { text: 'No such user' });
    sink.reject('busy@example.net', 451, { text: 'Greylisted' });
    sink.reject('spam@example.net', 554, { text: 'Message refused', at: 'data' });
    sink.reject('dropped@example.net', 421);
    const t = smtpTransport(sink.url, null);
    try {
      await assert.rejects(t.send(message('gone@example.net')), (err: unknown) => {
        assert.ok(err instanceof TransportError);
        assert.equal(err.permanent, true);
        assert.equal(err.responseCode, 550);
        return true;
      });
      await assert.rejects(t.send(message('busy@example.net')), (err: unknown) => {
        assert.ok(err instanceof TransportError);
        assert.equal(err.permanent, false);
        assert.equal(err.responseCode, 451);
        return true;
      });
      await assert.rejects(t.send(message('spam@example.net')), (err: unknown) => {
        assert.ok(err instanceof TransportError);
        assert.equal(err.permanent, true);
        assert.equal(err.responseCode, 554);
        return true;
      });
      await assert.rejects(t.send(message('dropped@example.net')), (err: unknown) => {
        assert.ok(err instanceof TransportError);
        assert.equal(err.permanent, false, 'a closed connection is temporary');
        return true;
      });
      // The pool stays usable after refusals.
      await t.send(message('fine@example.net'));
    } finally {
      sink.acceptAll();
      await t.close();
    }
    assert.equal(sink.to('gone@example.net').length, 0);
    assert.equal(sink.to('spam@example.net').length, 0);
  });

  it('reports a server that cannot be reached as a temporary failure, in send and verify', async () => {
    const t = smtpTransport(`smtp://127.0.0.1:${await closedPort()}`, null);
    try {
      await assert.rejects(t.send(message('x@example.net')), (err: unknown) => err instanceof TransportError && err.permanent === false);
      await assert.rejects(t.verify(), (err: unknown) => err instanceof TransportError && err.permanent === false);
    } finally {
      await t.close();
    }
  });

  it('verifies a reachable server', async () => {
    const t = smtpTransport(sink.url, null);
    await t.verify();
    await t.close();
  });

  it('signs with DKIM when a key is configured', async () => {
    const t = smtpTransport(sink.url, { domain: 'example.com', selector: 'mail', privateKey: dkimKey() });
    try {
      await t.send(message('dkim@example.net'));
      const m = await sink.waitFor((x) => x.envelope.to.includes('dkim@example.net'));
      const sig = m.header('dkim-signature');
      assert.ok(sig, 'DKIM-Signature header present');
      assert.match(sig!, /d=example\.com/);
      assert.match(sig!, /s=mail/);
      assert.match(sig!, /a=rsa-sha256/);
      assert.match(sig!, /b=[A-Za-z0-9+/=\s]{40,}/);
    } finally {
      await t.close();
    }
  });

  it('signs a campaign mail verifiably, covering both List-Unsubscribe fields and every field a receiver relies on', async () => {
    const { dkim, resolver } = dkimPair('example.com', 'sel2048');
    const t = smtpTransport(sink.url, dkim);
    try {
      await t.send(campaignMessage('dkim-campaign@example.net'));
      const m = await sink.waitFor((x) => x.envelope.to.includes('dkim-campaign@example.net'));
      const signed = await verifiedSignedFields(m.raw, resolver, 'example.com');
      for (const field of MUST_BE_SIGNED) assert.ok(signed.includes(field), `${field} is signed (h=${signed.join(':')})`);
    } finally {
      await t.close();
    }
  });

  it('waits for messages in flight before closing', async () => {
    sink.delayMs = 300;
    const t = smtpTransport(sink.url, null);
    let delivered = false;
    const sending = t.send(message('slow@example.net')).then(() => (delivered = true));
    await new Promise((r) => setTimeout(r, 50));
    await t.close();
    sink.delayMs = 0;
    assert.equal(delivered, true);
    await sending;
  });

  it('talks implicit TLS for smtps:// URLs', async () => {
    const secure = await SmtpSink.start({ secure: true });
    const t = createTransport({ smtpUrl: secure.urlWith('u', 'p', 'smtps'), outboxDir: '/nonexistent', dkim: null });
    try {
      await t.send(message('tls@example.net'));
      const m = await secure.waitFor((x) => x.envelope.to.includes('tls@example.net'));
      assert.equal(m.user, 'u');
    } finally {
      await t.close();
      await secure.close();
    }
  });
});

describe('outbox transport', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'outbox-test-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('is the default when no SMTP_URL is configured, and writes a parseable .eml file', async () => {
    const outbox = join(dir, 'plain');
    const t = createTransport({ smtpUrl: null, outboxDir: outbox, dkim: null });
    await t.verify();
    const res = await t.send(message('file@example.net', { messageId: 'file.1@example.com' }));
    await t.close();
    assert.equal(res.messageId, 'file.1@example.com');
    const files = readdirSync(outbox);
    assert.deepEqual(files, [res.response.slice(outbox.length + 1)]);
    assert.match(files[0], /\.eml$/);
    const raw = readFileSync(res.response, 'utf8');
    assert.match(raw, /\r\n/, 'CRLF line ends');
    const m = parseMessage(raw);
    assert.equal(m.subject, 'Grüße from the test');
    assert.equal(m.headers['to'][0], 'file@example.net');
    assert.equal(m.headers['message-id'][0], '<file.1@example.com>');
    assert.equal(m.text?.trim(), 'Plain body ✓');
    assert.equal(m.html?.trim(), '<p>HTML body ✓</p>');
  });

  it('signs the file with DKIM when configured', async () => {
    const outbox = join(dir, 'dkim');
    const t = outboxTransport(outbox, { domain: 'example.org', selector: 's1', privateKey: dkimKey() });
    const res = await t.send(message('signed@example.net'));
    await t.close();
    const m = parseMessage(readFileSync(res.response, 'utf8'));
    assert.match(m.headers['dkim-signature']?.[0] ?? '', /d=example\.org;.*s=s1/s);
  });

  it('signs a campaign mail file verifiably, covering both List-Unsubscribe fields and every field a receiver relies on', async () => {
    const { dkim, resolver } = dkimPair('example.org', 's1');
    const t = outboxTransport(join(dir, 'dkim-campaign'), dkim);
    const res = await t.send(campaignMessage('signed-campaign@example.net'));
    await t.close();
    const signed = await verifiedSignedFields(readFileSync(res.response, 'utf8'), resolver, 'example.org');
    for (const field of MUST_BE_SIGNED) assert.ok(signed.includes(field), `${field} is signed (h=${signed.join(':')})`);
  });

  it('fails temporarily when the folder cannot be written', async () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, 'not a folder');
    const t = outboxTransport(join(file, 'outbox'), null);
    await assert.rejects(t.send(message('x@example.net')), (err: unknown) => err instanceof TransportError && !err.permanent);
    await t.close();
  });
});

describe('transport errors and system address', () => {
  it('classifies SMTP replies: 5xx permanent except 503 and refused logins', () => {
    assert.equal(toTransportError({ message: 'x', responseCode: 550 }).permanent, true);
    assert.equal(toTransportError({ message: 'x', responseCode: 552, permanent: true }).permanent, true);
    assert.equal(toTransportError({ message: 'x', responseCode: 503 }).permanent, false);
    assert.equal(toTransportError({ message: 'x', responseCode: 535, code: 'EAUTH' }).permanent, false);
    assert.equal(toTransportError({ message: 'x', responseCode: 421 }).permanent, false);
    assert.equal(toTransportError(Object.assign(new Error('refused'), { code: 'ESOCKET' })).permanent, false);
  });

  it('sends the service mails from no-reply at the DKIM domain, else the public host', () => {
    assert.equal(systemFrom({ dkim: null, publicUrl: 'https://mail.acme.test:8443/app' }).address, 'no-reply@mail.acme.test');
    assert.equal(
      systemFrom({ dkim: { domain: 'acme.test', selector: 's', privateKey: 'k' }, publicUrl: 'http://localhost:3000' }).address,
      'no-reply@acme.test',
    );
  });
});
