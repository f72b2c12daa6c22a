import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { SmtpSink } from '../support/smtp-sink.js';
import type { SendsContext } from '../modules/single-sends.helpers.js';
import { countersOf, postMail, reportOf, sendTo, setupBounces, suppressionsOf, INBOUND_TOKEN } from './bounces.helpers.js';

const DAY = 24 * 60 * 60 * 1000;

describe('bounces and complaints after the accept, through POST /inbound/email/<token>', () => {
  let t: SendsContext & { sink: SmtpSink };
  let seq = 0;
  const addr = (tag: string) => `${tag}.${++seq}@example.com`;
  before(async () => {
    t = await setupBounces();
  });
  after(() => t.close());

  const row = (id: number) => t.database.db.selectFrom('mail_messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  test('a hard DSN naming a sent message by VERP: counted once as a hard bounce, out of delivered, the address suppressed', async () => {
    const [m, other] = await sendTo(t, t.a, [addr('gone'), addr('stays')]);
    assert.deepEqual(await countersOf(t, m.sendId), { delivered: 2, bounces: 0, hard_bounces: 0, soft_bounces: 0, spam_reports: 0 });
    const raw = reportOf('postfix-dsn-user-unknown', m);
    const r = await postMail(t, raw);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, { status: 'success', message: { kind: 'bounce', type: 'hard', recipient: m.email, matched: true } });
    assert.deepEqual(await countersOf(t, m.sendId), { delivered: 1, bounces: 1, hard_bounces: 1, soft_bounces: 0, spam_reports: 0 });
    const after1 = await row(m.id);
    assert.equal(after1.state, 'bounced');
    assert.equal(after1.bounce_type, 'hard');
    const [s] = await suppressionsOf(t, m.email);
    assert.equal(s.user_id, t.a.keys!.user_id);
    assert.equal(s.reason, 'hard_bounce');
    assert.match(s.detail ?? '', /550 5\.1\.1 .*User unknown/);
    assert.equal((await row(other.id)).state, 'sent');
    // The same DSN again, and another system's report of the same message: counted nothing more.
    assert.deepEqual((await postMail(t, raw)).body.message.matched, true);
    assert.equal((await postMail(t, reportOf('gmail-dsn', m))).status, 200);
    assert.equal((await postMail(t, reportOf('exim-text', m))).status, 200);
    assert.deepEqual(await countersOf(t, m.sendId), { delivered: 1, bounces: 1, hard_bounces: 1, soft_bounces: 0, spam_reports: 0 });
    assert.equal((await suppressionsOf(t, m.email)).length, 1);
  });

  for (const name of ['gmail-dsn', 'exchange-dsn', 'exim-text', 'qmail-text', 'yahoo-text', 'sendmail-text']) {
    test(`${name}: matched by the Message-ID alone (no VERP address in it) and counted as hard`, async () => {
      const [m] = await sendTo(t, t.a, [addr(name)]);
      const r = await postMail(t, reportOf(name, m, { verp: 'someone@relay.example.net' }));
      assert.deepEqual(r.body.message, { kind: 'bounce', type: 'hard', recipient: m.email, matched: true });
      assert.deepEqual(await countersOf(t, m.sendId), { delivered: 0, bounces: 1, hard_bounces: 1, soft_bounces: 0, spam_reports: 0 });
    });
  }

  test('a Message-ID with its case changed on the way still names its message', async () => {
    const [m] = await sendTo(t, t.a, [addr('case')]);
    const r = await postMail(t, reportOf('exchange-dsn', m, { verp: 'x@relay.example.net', messageId: m.messageId.toUpperCase() }));
    assert.equal(r.body.message.matched, true);
  });

  test('soft: counted as a soft bounce, not suppressed; 3 soft bounces of the address within 30 days suppress it', async () => {
    const email = addr('full');
    const sent = [];
    for (let i = 0; i < 3; i++) sent.push((await sendTo(t, t.a, [email]))[0]);
    const r = await postMail(t, reportOf('postfix-dsn-mailbox-full', sent[0]));
    assert.deepEqual(r.body.message, { kind: 'bounce', type: 'soft', recipient: email, matched: true });
    assert.deepEqual(await countersOf(t, sent[0].sendId), { delivered: 0, bounces: 1, hard_bounces: 0, soft_bounces: 1, spam_reports: 0 });
    assert.equal((await row(sent[0].id)).bounce_type, 'soft');
    t.clock.advance(10 * DAY);
    await postMail(t, reportOf('postfix-dsn-mailbox-full', sent[1]));
    // The same report again counts nothing toward the threshold.
    await postMail(t, reportOf('postfix-dsn-mailbox-full', sent[1]));
    assert.deepEqual(await suppressionsOf(t, email), []);
    t.clock.advance(10 * DAY);
    await postMail(t, reportOf('postfix-dsn-mailbox-full', sent[2]));
    const [s] = await suppressionsOf(t, email);
    assert.equal(s.reason, 'soft_bounces');
    assert.match(s.detail ?? '', /Mailbox full/);
  });

  test('soft bounces further apart than 30 days do not suppress', async () => {
    const email = addr('apart');
    const sent = [];
    for (let i = 0; i < 3; i++) sent.push((await sendTo(t, t.a, [email]))[0]);
    await postMail(t, reportOf('postfix-dsn-mailbox-full', sent[0]));
    t.clock.advance(20 * DAY);
    await postMail(t, reportOf('postfix-dsn-mailbox-full', sent[1]));
    t.clock.advance(11 * DAY);
    await postMail(t, reportOf('postfix-dsn-mailbox-full', sent[2]));
    assert.deepEqual(await suppressionsOf(t, email), []);
  });

  test('a complaint (ARF): counted once in spam_reports, the address globally unsubscribed and suppressed', async () => {
    const [m] = await sendTo(t, t.a, [addr('angry')]);
    const raw = reportOf('arf-abuse', m);
    const r = await postMail(t, raw);
    assert.deepEqual(r.body.message, { kind: 'complaint', type: null, recipient: m.email, matched: true });
    await postMail(t, raw);
    await postMail(t, reportOf('arf-abuse', m, { verp: 'x@y.example' }));
    assert.deepEqual(await countersOf(t, m.sendId), { delivered: 1, bounces: 0, hard_bounces: 0, soft_bounces: 0, spam_reports: 1 });
    assert.equal((await row(m.id)).complained, 1);
    const list = (await t.a.get('/global-unsubscribes')).body.message.unSubscribers;
    assert.ok(list.some((u: { email_address: string }) => u.email_address === m.email));
    assert.equal((await suppressionsOf(t, m.email))[0].reason, 'complaint');
  });

  test('a delayed DSN and an out-of-office reply are ignored and change nothing', async () => {
    const [m] = await sendTo(t, t.a, [addr('slow')]);
    const r = await postMail(t, reportOf('dsn-delayed', m));
    assert.deepEqual(r.body.message, { kind: 'ignored', type: null, recipient: m.email, matched: false });
    assert.equal((await postMail(t, reportOf('auto-reply', m))).body.message.kind, 'ignored');
    assert.deepEqual(await countersOf(t, m.sendId), { delivered: 1, bounces: 0, hard_bounces: 0, soft_bounces: 0, spam_reports: 0 });
    assert.equal((await row(m.id)).state, 'sent');
  });

  test('a report naming no message of this installation (forged VERP, unknown Message-ID) changes nothing; it is counted in a metric', async () => {
    const [m] = await sendTo(t, t.a, [addr('forged')]);
    const forged = m.verp.replace(/-[0-9a-f]{16}@/, '-0000000000000000@');
    const r = await postMail(t, reportOf('postfix-dsn-user-unknown', m, { verp: forged, messageId: 'nothing.1@elsewhere.example' }));
    assert.deepEqual(r.body.message, { kind: 'bounce', type: 'hard', recipient: m.email, matched: false });
    assert.deepEqual(await suppressionsOf(t, m.email), []);
    assert.equal((await row(m.id)).state, 'sent');
    const metric = await t.deps.metrics.getSingleMetricAsString('inbound_events_total');
    assert.match(metric, /inbound_events_total\{source="inbound",kind="bounce",matched="false",counted="false"\} [1-9]/);
  });

  test('404 Route not found for another token; nothing is read', async () => {
    const [m] = await sendTo(t, t.a, [addr('token')]);
    const r = await postMail(t, reportOf('postfix-dsn-user-unknown', m), { token: INBOUND_TOKEN + 'x' });
    assert.equal(r.status, 404);
    assert.deepEqual(r.body, { status: 'failed', errors: 'Route not found' });
    assert.deepEqual(await suppressionsOf(t, m.email), []);
  });

  test('text/plain bodies are taken too; other content types are refused with 415', async () => {
    const [m] = await sendTo(t, t.a, [addr('plain')]);
    assert.equal((await postMail(t, reportOf('qmail-text', m), { type: 'text/plain; charset=utf-8' })).body.message.matched, true);
    const r = await t.anon.request('POST', `/inbound/email/${INBOUND_TOKEN}`, { json: { a: 1 } });
    assert.equal(r.status, 415);
  });

  test('a 5xx at the SMTP accept is classified by the same rule: a spam refusal is a soft bounce, not suppressed', async () => {
    const email = addr('policy');
    t.sink.reject(email, 550, { text: '5.7.1 Message rejected as spam' });
    const { type } = await (await import('../modules/single-sends.helpers.js')).typeWith(t.a, [[email]]);
    const h = await import('../modules/single-sends.helpers.js');
    const utr = await h.createSend(t.a, h.sendForm({ sender: await h.verifiedSender(t, t.a), group: await h.group(t.a), type }));
    await (await import('../helpers.js')).drainQueue(t);
    t.sink.acceptAll();
    const send = await t.database.db.selectFrom('single_sends').select('id').where('utr', '=', utr).executeTakeFirstOrThrow();
    assert.deepEqual(await countersOf(t, send.id), { delivered: 0, bounces: 1, hard_bounces: 0, soft_bounces: 1, spam_reports: 0 });
    assert.deepEqual(await suppressionsOf(t, email), []);
  });
});

describe('POST /inbound/email/<token> without INBOUND_TOKEN', () => {
  test('answers 404 Route not found', async () => {
    const t = await setupBounces({ inboundToken: null });
    try {
      const r = await postMail(t, 'Subject: x\r\n\r\nhi', { token: 'anything' });
      assert.equal(r.status, 404);
      assert.deepEqual(r.body, { status: 'failed', errors: 'Route not found' });
    } finally {
      await t.close();
    }
  });
});
