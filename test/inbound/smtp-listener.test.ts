import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import nodemailer, { type Transporter } from 'nodemailer';
import { MAIL_KINDS } from '../../src/mail-kinds.js';
import { startInboundSmtp, type InboundSmtp } from '../../src/inbound/smtp-listener.js';
import type { SmtpSink } from '../support/smtp-sink.js';
import type { SendsContext } from '../modules/single-sends.helpers.js';
import { countersOf, postMail, reportOf, sendTo, setupBounces, suppressionsOf } from './bounces.helpers.js';
import { nestedMultipart } from './fixtures.js';

describe('the inbound SMTP listener', () => {
  let t: SendsContext & { sink: SmtpSink };
  let listener: InboundSmtp;
  let client: Transporter;
  before(async () => {
    t = await setupBounces();
    listener = await startInboundSmtp(t.deps, MAIL_KINDS, 0);
    client = nodemailer.createTransport({ host: '127.0.0.1', port: listener.port, secure: false, ignoreTLS: true });
  });
  after(async () => {
    client.close();
    await listener.close();
    await t.close();
  });

  /** Sends a raw report to the listener as a bouncing server would: null sender, to the VERP address. */
  const deliver = (raw: Buffer, to: string) => client.sendMail({ envelope: { from: '', to: [to] }, raw });

  test('a DSN sent to the VERP address is taken in like the route: counted once, the address suppressed', async () => {
    const [m] = await sendTo(t, t.a, ['smtp.gone@example.com']);
    const raw = reportOf('postfix-dsn-user-unknown', m);
    const info = await deliver(raw, m.verp);
    assert.match(String(info.response), /^250/);
    assert.deepEqual(await countersOf(t, m.sendId), { delivered: 0, bounces: 1, hard_bounces: 1, soft_bounces: 0, spam_reports: 0 });
    assert.equal((await suppressionsOf(t, m.email))[0].reason, 'hard_bounce');
    // The same mail again, by SMTP and by the route: counted once.
    await deliver(raw, m.verp);
    assert.equal((await postMail(t, raw)).body.message.matched, true);
    assert.deepEqual(await countersOf(t, m.sendId), { delivered: 0, bounces: 1, hard_bounces: 1, soft_bounces: 0, spam_reports: 0 });
  });

  test('the envelope recipient alone names the message (a bounce text that quotes nothing of it)', async () => {
    const [m] = await sendTo(t, t.a, ['smtp.full@example.com']);
    const raw = Buffer.from(
      [
        'From: MAILER-DAEMON@mail.example.org',
        'To: postmaster@mail.example.test',
        'Subject: failure notice',
        '',
        'Hi. This is the qmail-send program at mail.example.org.',
        "I'm afraid I wasn't able to deliver your message to the following addresses.",
        '',
        `<${m.email}>:`,
        'Mailbox quota exceeded (#5.2.2)',
        '',
      ].join('\r\n'),
    );
    await deliver(raw, m.verp);
    assert.deepEqual(await countersOf(t, m.sendId), { delivered: 0, bounces: 1, hard_bounces: 0, soft_bounces: 1, spam_reports: 0 });
  });

  test('an ARF complaint by SMTP', async () => {
    const [m] = await sendTo(t, t.a, ['smtp.angry@example.com']);
    await deliver(reportOf('arf-abuse', m), 'bounces@mail.example.test');
    assert.deepEqual(await countersOf(t, m.sendId), { delivered: 1, bounces: 0, hard_bounces: 0, soft_bounces: 0, spam_reports: 1 });
  });

  test('a message of 1,000 nested multipart/mixed parts is refused for good (554 5.6.0), not deferred', async () => {
    await assert.rejects(deliver(nestedMultipart(1000), 'bounces@mail.example.test'), (err: Error & { responseCode?: number }) => {
      assert.equal(err.responseCode, 554);
      assert.match(err.message, /5\.6\.0 The message cannot be read: it has more than 100 MIME parts/);
      return true;
    });
  });

  test('mail for another domain is refused at RCPT TO', async () => {
    await assert.rejects(deliver(Buffer.from('Subject: x\r\n\r\nhi\r\n'), 'someone@elsewhere.example'), /550|recipients were rejected/i);
  });
});
