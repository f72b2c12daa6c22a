/**
 * Hard or soft, the one rule (src/delivery/bounce-classes.ts), case by case: the server's words,
 * its enhanced status and where in the SMTP dialogue it answered. The same function reads the
 * answers of DSNs, text bounces, relays' webhooks and the SMTP server at the accept.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  AFTER_DATA_TEXTS,
  AT_RCPT_TEXTS,
  FILTER_TEXTS,
  HARD_DOMAIN_TEXTS,
  HARD_STATUS_CODES,
  HARD_TEXTS,
  REFUSAL_TEXTS,
  SOFT_TEXTS,
  classifyBounce,
  enhancedStatus,
} from '../../src/delivery/bounce-classes.js';

type Case = [status: string | null, text: string, context: string | null, why: string];

const HARD: Case[] = [
  [null, '550 5.1.1 <a@b.example>: Recipient address rejected: User unknown in local recipient table', null, '5.1.1 and the words'],
  ['5.1.1', 'smtp; 550 Requested action not taken', null, 'the status alone'],
  ['5.1.2', 'Host or domain name not found. Name service error for name=nowhere.example', null, 'no such domain'],
  [null, '550 5.1.6 Recipient has moved', null, 'moved'],
  [null, '550 5.1.10 RESOLVER.ADR.RecipientNotFound', null, 'null MX / not found'],
  [null, '554 5.4.4 Unable to route: no MX', null, 'unroutable'],
  [null, '550 No such user here', null, 'words without a status'],
  [null, "554 delivery error: dd This user doesn't have a yahoo.com account", null, 'Yahoo'],
  [null, 'The email account that you tried to reach does not exist.', null, 'Gmail'],
  [null, 'User some.name (a@b.example) not listed in Domino Directory', null, 'Domino'],
  [null, 'The recipient name is not recognized', null, 'Exchange 2003'],
  [
    '5.2.1',
    '550 5.2.1 <a@b.example>... User Unknown',
    'SMTP error from remote server after RCPT command',
    'a mailbox status, but refused at RCPT TO',
  ],
  ['5.7.27', '550 Host does not accept mail', null, 'the domain takes no mail, whatever the status'],
  [null, 'an MX or SRV record indicated no SMTP service', null, 'null MX (mail.ru)'],
  [
    null,
    '554 The mail could not be delivered to the recipient because the domain is not reachable. Please check the domain and try again',
    null,
    'a domain text beats "try again"',
  ],
  [
    null,
    'The account or domain may not exist, they may be blacklisted, or missing the proper dns entries.',
    null,
    'a hard text beats a refusal text',
  ],
  [
    null,
    '550 5.4.1 Recipient address rejected: Access denied',
    'in reply to RCPT TO command',
    'Office 365: no such recipient in the directory',
  ],
];

const SOFT: Case[] = [
  [null, '552 5.2.2 Mailbox full', null, 'full'],
  ['5.1.1', '550 5.1.1 <a@b.example>... Not enough disk space', null, 'full, though 5.1.1'],
  [null, '552 sorry, mailbox a@b.example is over quota temporarily (#5.1.1)', null, 'over quota, though 5.1.1'],
  [null, '550 5.1.1 <a@b.example> - 203.0.113.9 has sent to too many recipients this hour', null, 'a rate limit, though 5.1.1'],
  [null, '550 5.7.1 Message rejected as spam by Content Filtering', null, 'spam'],
  [null, '554 5.7.1 Service unavailable; Client host blocked using zen.spamhaus.org', null, 'blocked'],
  [null, '550-5.1.0 MXIN506 MailFrom domain is listed in Spamhaus', null, 'a listed sender'],
  [null, '552 5.3.4 Message size exceeds fixed limit', null, 'too large'],
  [null, 'This account has been disabled or discontinued', null, 'disabled'],
  [null, '550 Mailbox unavailable', null, 'says nothing of the address'],
  [null, '554 5.0.0 Service unavailable', null, 'a system error'],
  [null, 'connect to 192.5.1.1 port 25: Connection timed out', null, 'the network'],
  ['4.1.1', '450 4.1.1 user unknown (try later)', null, 'temporary'],
  [null, '421 4.7.0 Try again later, closing connection', null, 'temporary'],
  [null, '550 Unknown user a@b.example', 'in reply to end of DATA command', 'user unknown after the data: a filter'],
  [null, '550 5.0.0 <a@b.example>... User unknown', '>>> DATA\n<<< 550 5.0.0 <a@b.example>... User unknown', 'a transcript: after DATA'],
  [null, '550 : User unknown', null, "au's filter, naming no address"],
  ['5.2.1', '550 5.2.1 <a@b.example>... User Unknown', null, 'a mailbox status, place unknown'],
  [
    null,
    '550 5.1.1 <sender@a.example>... User unknown',
    'SMTP error from remote mail server after MAIL FROM:<sender@a.example>',
    'the sender refused',
  ],
  [
    '5.4.4',
    'Name service error for name=b.example type=MX: Malformed or unexpected name server reply',
    null,
    'a DNS failure that may pass',
  ],
  [null, 'Name service error for domain b.example: Host not found, try again', null, 'a DNS failure that may pass'],
  [null, '550 5.7.1 Relay access denied', null, 'relay'],
];

describe('hard or soft: one rule over status, words and the place in the dialogue', () => {
  for (const [status, text, context, why] of HARD)
    test(`hard (${why}): ${status ?? ''} ${text}`, () => assert.equal(classifyBounce(status, text, context), 'hard'));
  for (const [status, text, context, why] of SOFT)
    test(`soft (${why}): ${status ?? ''} ${text}`, () => assert.equal(classifyBounce(status, text, context), 'soft'));

  test('nothing known is soft: an empty answer, garbage', () => {
    for (const text of [null, '', '   ', 'x', '\u0000\uffff']) assert.equal(classifyBounce(null, text), 'soft');
  });

  test('a generic status (5.0.0) gives way to the code the server wrote in its answer', () => {
    assert.equal(classifyBounce('5.0.0', '550 5.1.1 <a@b.example>: mailbox unavailable'), 'hard');
    assert.equal(classifyBounce('5.0.0', "5.3.0 - Other mail system problem 550-'Unknown user a@b.example'"), 'soft');
  });

  test('the tables are lower-case words, each once, and the hard codes are 5.x.x', () => {
    const tables = { HARD_TEXTS, HARD_DOMAIN_TEXTS, SOFT_TEXTS, REFUSAL_TEXTS, FILTER_TEXTS, AFTER_DATA_TEXTS, AT_RCPT_TEXTS };
    for (const [name, table] of Object.entries(tables)) {
      assert.ok(table.length > 0, name);
      for (const t of table) assert.equal(t, t.toLowerCase().replace(/\s+/g, ' '), `${name}: ${t}`);
      assert.equal(new Set(table).size, table.length, `${name} has a text twice`);
    }
    for (const code of HARD_STATUS_CODES) assert.match(code, /^5\.\d{1,3}\.\d{1,3}$/);
  });

  test('enhancedStatus reads the first x.y.z code, not a version or an address', () => {
    assert.equal(enhancedStatus('550 5.1.1 <a@b>'), '5.1.1');
    assert.equal(enhancedStatus('550 #5.1.0 Address rejected.'), '5.1.0');
    assert.equal(enhancedStatus('Exim 4.96.2 said 550'), null);
    assert.equal(enhancedStatus('host 192.0.2.1: 550'), null);
    assert.equal(enhancedStatus('550 5.1.10 x'), '5.1.10');
    assert.equal(enhancedStatus('550 5.1.351 x'), '5.1.351');
  });
});
