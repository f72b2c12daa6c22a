/**
 * The formats of the large mail systems, one real mail each (from test/inbound/corpus/sisimai):
 * what the parser reads in it (kind, recipient, hard or soft, the answer kept). Most of these came
 * out `ignored` before the text reader and the RFC 3464 fields read anywhere; the differential
 * test compares the whole corpus with Sisimai, this one holds each format to its reading without it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parseInboundMail } from '../../src/inbound/parse.js';
import { CORPUS } from './sisimai-compare.js';

type Expected = [
  file: string,
  system: string,
  kind: 'bounce' | 'complaint',
  recipient: string,
  type: 'hard' | 'soft' | null,
  reason: RegExp,
];

const CASES: Expected[] = [
  ['lhost-exim-05', 'Exim', 'bounce', 'kijitora@neko.example.co.jp', 'hard', /553 5\.1\.1 unknown or illegal user/],
  ['lhost-qmail-08', 'qmail', 'bounce', 'shironeko@example.ad.jp', 'soft', /disk quota exceeded/],
  ['lhost-mcafee-01', 'McAfee (a DSN of one group)', 'bounce', 'kijitora@example.co.jp', 'hard', /550 Unknown user/],
  [
    'rhost-aol-01',
    'AOL (message and recipient fields in one group)',
    'bounce',
    'kijitora@example.jp',
    'hard',
    /Host or domain name not found/,
  ],
  [
    'lhost-messagingserver-03',
    'Messaging Server (DSN fields without MIME parts)',
    'bounce',
    'sabineko@example.org',
    'soft',
    /5\.7\.1 550 User Unknown/,
  ],
  ['lhost-amazonworkmail-01', 'Amazon WorkMail (DSN fields in the text)', 'bounce', 'kijitora@example.jp', 'hard', /User Unknown/],
  ['lhost-amazonses-09', 'Amazon SES bounce by mail', 'bounce', 'bounce@simulator.amazonses.com', 'hard', /user unknown/],
  ['lhost-amazonses-11', 'Amazon SES complaint by mail', 'complaint', 'complaint@simulator.amazonses.com', null, /complaint/i],
  ['arf-22', "Outlook.com's complaint report", 'complaint', 'kijitora@example.com', null, /abuse/],
  ['lhost-x5-01', 'a report forwarded by a gateway', 'bounce', 'kijitora@neko.example.org', 'hard', /User unknown/],
  ['lhost-exchange2003-01', 'Exchange 2003', 'bounce', 'kijitora@example.jp', 'hard', /recipient name is not recognized/],
  ['lhost-gmx-01', 'GMX', 'bounce', 'shironeko@example.jp', 'soft', /Mailbox Full/],
  ['lhost-domino-01', 'Domino', 'bounce', 'kijitora@example.jp', 'hard', /not listed in Domino Directory/],
  ['lhost-notes-03', 'Lotus Notes', 'bounce', 'kijitora@example.com', 'hard', /not listed in public Name & Address Book/],
  ['lhost-imailserver-01', 'IMail', 'bounce', 'kijitora@example.com', 'hard', /Unknown user/],
  ['lhost-opensmtpd-01', 'OpenSMTPD', 'bounce', 'apdugoaidugoaidugoaeiudggadi@gmail.com', 'hard', /550 5\.1\.1/],
  ['lhost-kddi-01', 'au (KDDI)', 'bounce', 'kijitora@x0000000000000.dion.ne.jp', 'soft', /mailbox is full/],
  ['lhost-zoho-01', 'Zoho', 'bounce', 'kijitora@example.co.jp', 'hard', /User Unknown/],
  ['lhost-googlegroups-01', 'Google Groups (X-Failed-Recipients)', 'bounce', 'libsisimai@googlegroups.com', 'soft', /libsisimai/],
  ['lhost-mfilter-01', 'm-FILTER (refused after DATA)', 'bounce', 'kijitora@example.com', 'soft', /550 unknown user/],
  ['lhost-v5sendmail-02', 'V5 sendmail', 'bounce', 'kijitora@neko.example.org', 'hard', /Host unknown/],
  ['lhost-mxlogic-01', 'MXLogic', 'bounce', 'kijitora@example.co.jp', 'hard', /User unknown in local recipient table/],
  ['lhost-x3-01', 'an unnamed system (Sisimai X3)', 'bounce', 'kijitora@example.com', 'hard', /No such user here/],
  ['lhost-trendmicro-01', 'Trend Micro InterScan', 'bounce', 'kijitora@example.co.jp', 'hard', /user unknown/],
  ['rhost-apple-03', 'iCloud', 'bounce', 'pseudo-local-part-of-apple-icloud-mail@icloud.com', 'soft', /over quota/],
  ['lhost-yandex-01', 'Yandex', 'bounce', 'kijitora@example.jp', 'hard', /User Unknown/],
  ['lhost-mailru-01', 'mail.ru', 'bounce', 'kijitora@example.jp', 'hard', /User Unknown/],
  ['lhost-fml-02', 'fml (a mailing list refuses a non-member)', 'bounce', 'neko-nyaan@example.org', 'soft', /not a member/],
  [
    'lhost-apachejames-01',
    'Apache James (a MIME structure the parser cannot follow)',
    'bounce',
    '000000000000@vtext.example.com',
    'hard',
    /no such user here/,
  ],
];

describe('the formats of the large mail systems', () => {
  for (const [file, system, kind, recipient, type, reason] of CASES) {
    test(`${system} (${file}): ${kind}${type ? ` (${type})` : ''} for ${recipient}`, async () => {
      const report = await parseInboundMail(readFileSync(join(CORPUS, `${file}.eml`)));
      assert.equal(report.kind, kind);
      const r = report.recipients[0];
      assert.equal(r?.email?.toLowerCase(), recipient);
      assert.equal(r.type, type);
      assert.match(r.reason ?? '', reason);
    });
  }

  test('a delay warning in a text (no DSN) is ignored, as a DSN whose action is delayed', async () => {
    for (const file of ['lhost-gmail-08', 'lhost-exim-38', 'lhost-sendmail-29']) {
      const report = await parseInboundMail(readFileSync(join(CORPUS, 'no-failure', `${file}.eml`)));
      assert.equal(report.kind, 'ignored', file);
    }
  });
});
