import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { classifyBounce } from '../../src/delivery/bounce-classes.js';
import { MAX_MIME_PARTS, parseInboundMail, reportEvents, UnreadableMail } from '../../src/inbound/parse.js';
import { fixture, nestedMultipart } from './fixtures.js';

const V = { rcpt: 'tom@example.com', verp: 'bounces+1f-0123456789abcdef@mail.example.test', messageId: 'AbCdEf.31@mail.example.test' };

describe('inbound parsing: DSNs, ARF reports and the common bounce texts', () => {
  const cases: Array<[name: string, kind: string, type: string | null, reason: RegExp]> = [
    ['postfix-dsn-user-unknown', 'bounce', 'hard', /^550 5\.1\.1 <tom@example\.com>: Recipient address rejected: User unknown/],
    ['postfix-dsn-mailbox-full', 'bounce', 'soft', /Mailbox full/],
    ['gmail-dsn', 'bounce', 'hard', /does not exist/],
    ['exchange-dsn', 'bounce', 'hard', /RecipientNotFound/],
    ['exim-text', 'bounce', 'hard', /User unknown in local recipient table/],
    ['qmail-text', 'bounce', 'hard', /no mailbox here by that name/],
    ['yahoo-text', 'bounce', 'hard', /doesn't have a yahoo\.com account/],
    ['sendmail-text', 'bounce', 'hard', /User unknown/],
    ['arf-abuse', 'complaint', null, /feedback-type: abuse/],
    ['dsn-delayed', 'ignored', null, /timed out/],
  ];
  for (const [name, kind, type, reason] of cases) {
    test(`${name}: ${kind}${type ? ` (${type})` : ''}, the recipient, our VERP address and the original Message-ID`, async () => {
      const report = await parseInboundMail(fixture(name, V));
      assert.equal(report.kind, kind);
      assert.equal(report.recipients.length, 1, JSON.stringify(report.recipients));
      const [r] = report.recipients;
      assert.equal(r.email, V.rcpt);
      assert.equal(r.type, type);
      assert.match(r.reason ?? '', reason);
      assert.ok(report.verp.includes(V.verp), `VERP among ${report.verp.join(', ')}`);
      assert.equal(report.messageId, `<${V.messageId}>`);
      const events = reportEvents(report, fixture(name, V), 'inbound');
      assert.equal(events.length, kind === 'ignored' ? 0 : 1);
      if (events[0]) {
        assert.equal(events[0].verp, V.verp);
        assert.equal(events[0].type, type);
        assert.match(events[0].eventKey ?? '', /^mail:[0-9a-f]{64}:0$/);
      }
    });
  }

  test('an out-of-office reply is no bounce', async () => {
    const report = await parseInboundMail(fixture('auto-reply', V));
    assert.equal(report.kind, 'ignored');
    assert.deepEqual(reportEvents(report, fixture('auto-reply', V), 'inbound'), []);
  });

  test('garbage, empty and truncated bodies parse to ignored, never throw', async () => {
    const full = fixture('postfix-dsn-user-unknown', V);
    for (const raw of [
      Buffer.alloc(0),
      Buffer.from('\x00\xff\xfe garbage'),
      full.subarray(0, 700),
      Buffer.from('Content-Type: multipart/report; boundary=x\r\n\r\n--x\r\n'),
    ]) {
      const report = await parseInboundMail(raw);
      assert.ok(['bounce', 'ignored'].includes(report.kind));
    }
  });

  test(`more than ${MAX_MIME_PARTS} MIME parts (1,000 nested multipart/mixed) is UnreadableMail, a 422 that says why`, async () => {
    await assert.rejects(parseInboundMail(nestedMultipart(1000)), (err: unknown) => {
      assert.ok(err instanceof UnreadableMail);
      assert.equal(err.statusCode, 422);
      assert.equal(err.message, `The message cannot be read: it has more than ${MAX_MIME_PARTS} MIME parts.`);
      return true;
    });
    await assert.rejects(parseInboundMail(nestedMultipart(MAX_MIME_PARTS)), UnreadableMail);
    // A few levels, as a bounce that returns a multipart message has, are read as before.
    assert.equal((await parseInboundMail(nestedMultipart(10))).kind, 'ignored');
  });
});

describe('hard or soft: one rule', () => {
  const hard = [
    [null, '550 5.1.1 <a@b.example>: Recipient address rejected: User unknown'],
    ['5.1.2', 'Host or domain name not found. Name service error for name=nowhere.example'],
    [null, '550 5.1.6 Recipient has moved'],
    [null, '550 5.1.10 RESOLVER.ADR.RecipientNotFound'],
    [null, '554 5.4.4 Unable to route: no MX'],
    [null, '550 No such user here'],
    [null, '553 sorry, mailbox not found'],
  ] as const;
  const soft = [
    [null, '552 5.2.2 Mailbox full'],
    [null, '550 5.7.1 Message rejected as spam by Content Filtering'],
    [null, '554 5.7.1 Service unavailable; Client host blocked using zen.spamhaus.org'],
    [null, '552 5.3.4 Message size exceeds fixed limit'],
    [null, '550 Mailbox unavailable'],
    ['4.1.1', '450 4.1.1 user unknown (try later)'],
    [null, '421 4.7.0 Try again later, closing connection'],
    [null, '554 5.0.0 Service unavailable'],
    [null, 'connect to 192.5.1.1 port 25: Connection timed out'],
  ] as const;
  for (const [status, text] of hard) test(`hard: ${status ?? ''} ${text}`, () => assert.equal(classifyBounce(status, text), 'hard'));
  for (const [status, text] of soft) test(`soft: ${status ?? ''} ${text}`, () => assert.equal(classifyBounce(status, text), 'soft'));
});
