import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { SmtpSink } from '../support/smtp-sink.js';
import type { SendsContext } from '../modules/single-sends.helpers.js';
import { postMail, setupBounces } from './bounces.helpers.js';
import { fixture, nestedMultipart } from './fixtures.js';

const NAMES = ['postfix-dsn-user-unknown', 'gmail-dsn', 'exchange-dsn', 'arf-abuse', 'exim-text', 'qmail-text', 'dsn-delayed'];

describe('POST /inbound/email/<token>: malformed bodies never fail the server', () => {
  let t: SendsContext & { sink: SmtpSink };
  before(async () => {
    t = await setupBounces();
  });
  after(() => t.close());

  test('random bytes, cut and spliced reports, broken MIME: always a 2xx or 4xx envelope', async () => {
    const base = NAMES.map((n) =>
      fixture(n, { rcpt: 'x@example.com', verp: 'bounces+1-0123456789abcdef@mail.example.test', messageId: 'a.1@b' }),
    );
    const body = fc.oneof(
      fc.uint8Array({ maxLength: 2000 }).map((a) => Buffer.from(a)),
      fc.string({ maxLength: 500 }).map((s) => Buffer.from(s)),
      fc.tuple(fc.nat(base.length - 1), fc.nat(), fc.nat(), fc.uint8Array({ maxLength: 50 })).map(([i, a, b, junk]) => {
        const raw = base[i];
        const from = a % raw.length;
        const to = from + (b % (raw.length - from + 1));
        return Buffer.concat([raw.subarray(0, from), Buffer.from(junk), raw.subarray(to)]);
      }),
      fc.constantFrom(
        Buffer.from('Content-Type: multipart/report; boundary=\r\n\r\n--\r\n'),
        Buffer.from('Content-Type: message/delivery-status\r\n\r\nAction: failed\r\nFinal-Recipient: ;\r\n'),
        Buffer.from(
          'Content-Type: multipart/report; report-type=feedback-report; boundary=b\r\n\r\n--b\r\nContent-Type: message/feedback-report\r\n\r\n\r\n--b--',
        ),
      ),
    );
    const type = fc.constantFrom('message/rfc822', 'text/plain', 'text/plain; charset=latin1', 'application/octet-stream');
    await fc.assert(
      fc.asyncProperty(body, type, async (raw, contentType) => {
        const r = await postMail(t, raw, { type: contentType });
        assert.ok(r.status < 500, `${r.status} ${r.text}`);
        assert.ok(r.body && typeof r.body.status === 'string', r.text);
      }),
      { numRuns: 150 },
    );
  });

  test('1,000 nested multipart/mixed parts: 422 with the reason, so a relay does not send it again', async () => {
    const r = await postMail(t, nestedMultipart(1000));
    assert.equal(r.status, 422, r.text);
    assert.deepEqual(r.body, { status: 'failed', errors: 'The message cannot be read: it has more than 100 MIME parts.' });
  });
});
