import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Resolver } from 'node:dns/promises';
import { dkimVerify } from 'mailauth';
import { drainQueue, fieldErrors, make } from '../helpers.js';
import { domainRecheckTask } from '../../src/modules/sending-domains/sending-domains.engine.js';
import { createSend, group, sendForm, typeWith, verifiedSender } from './single-sends.helpers.js';
import { act, automationWith } from './automations-delivery.helpers.js';
import { addDomain, checkNow, domainsSuite, passingZone, type DomainAnswer } from './sending-domains.helpers.js';

const MINUTE = 60_000;
const REFUSED = fieldErrors({ sender_id: ["The sender's domain fails authentication."] });

describe('sending domains: signing, the guard, the events and the hourly re-check', () => {
  const s = domainsSuite({ sink: true, env: { WEBHOOKS_ALLOW_PRIVATE: '1' } });

  /** Verifies a raw mail's DKIM signatures with mailauth against the test DNS server. */
  async function dkimOf(raw: string) {
    const r = new Resolver();
    r.setServers([s.dns.address]);
    const { results } = await dkimVerify(Buffer.from(raw), {
      resolver: (name: string, rr: string) => r.resolve(name, rr as 'TXT') as Promise<any>,
    });
    return results as unknown as Array<{
      signingDomain: string;
      selector: string;
      status: { result: string; comment?: string };
      signingHeaders: { keys: string };
    }>;
  }

  /** The events the account's webhook endpoint was given, by type. */
  const eventTypes = async () =>
    (
      await s.t.database.db.selectFrom('webhook_events').select('type').where('user_id', '=', s.t.a.keys!.user_id).orderBy('id').execute()
    ).map((e) => e.type);

  /** A domain of account A whose sender is verified, the domain checked with every record published. */
  async function verifiedDomain(name: string): Promise<{ d: DomainAnswer; sender: number }> {
    const d = await addDomain(s.t.a, name);
    s.dns.zone = passingZone(d);
    assert.equal((await checkNow(s.t.a, d.id)).status, 'verified');
    const sender = await verifiedSender(s.t, s.t.a, { from_email: `news@${name}` });
    return { d, sender };
  }

  it('signs mail from a verified domain with its own key (d=, s=), List-Unsubscribe headers covered; mailauth verifies it', async () => {
    const { d, sender } = await verifiedDomain('signed.example.com');
    const { type } = await typeWith(s.t.a, [['reader@inbox.test', 'Rea']]);
    await createSend(s.t.a, sendForm({ sender, group: await group(s.t.a), type }));
    await drainQueue(s.t);
    const mail = await s.t.sink!.waitFor((m) => m.envelope.to.includes('reader@inbox.test'));
    const [sig, ...more] = await dkimOf(mail.raw);
    assert.equal(more.length, 0, 'one signature: the domain key replaces the installation key');
    assert.equal(sig.status.result, 'pass', sig.status.comment);
    assert.equal(sig.signingDomain, d.domain);
    assert.equal(sig.selector, 'campaign');
    const signed = sig.signingHeaders.keys.split(':').map((k) => k.trim().toLowerCase());
    for (const h of ['from', 'to', 'subject', 'date', 'message-id', 'list-unsubscribe', 'list-unsubscribe-post'])
      assert.ok(signed.includes(h), h);
  });

  it('a single send from a failing domain cannot start or be scheduled (a draft can be saved); check warns', async () => {
    const { d, sender } = await verifiedDomain('guarded.example.com');
    s.dns.zone = { ...passingZone(d), [d.records[0].host]: {} };
    assert.equal((await checkNow(s.t.a, d.id)).status, 'failed');
    const base = { sender, group: await group(s.t.a), type: (await typeWith(s.t.a, [])).type };
    const now = await s.t.a.post('/single/send/create', sendForm(base));
    assert.equal(now.status, 422);
    assert.deepEqual(now.body, REFUSED);
    const later = await s.t.a.post(
      '/single/send/create',
      sendForm(base, { schedule_type: 1, schedule_date: '2030-02-01', schedule_time: '10:00', timezone: 'UTC' }),
    );
    assert.deepEqual(later.body, REFUSED);
    const draft = await s.t.a.post('/single/send/create', sendForm(base, { draft: 1 }));
    assert.equal(draft.status, 200, draft.text);
    const check = await s.t.a.get('/single-send/check', { utr: draft.body.message.utr });
    assert.ok(
      check.body.message.warnings.some((w: { type: string }) => w.type === 'sender_domain_failed'),
      check.text,
    );
    // A sender whose domain is no sending domain is not blocked, and the check says so.
    const plain = await verifiedSender(s.t, s.t.a, { from_email: 'hello@unlisted.example.org' });
    const utr = await createSend(s.t.a, sendForm({ ...base, sender: plain }, { draft: 1 }));
    const warned = await s.t.a.get('/single-send/check', { utr });
    const w = warned.body.message.warnings.find((x: { type: string }) => x.type === 'sender_domain_unauthenticated');
    assert.match(w.message, /unlisted\.example\.org\) is not a sending domain/);
  });

  it('an automation’s mail waits in the queue while its domain fails, and goes (signed) once it passes; the events and notes tell each change', async () => {
    assert.equal((await s.t.a.post('/notification-recipient/save', { email_address: 'boss@notes.test', email_owner: 'Boss' })).status, 200);
    assert.equal((await s.t.a.post('/webhooks/endpoints/create', { url: 'http://127.0.0.1:9/hook', events: ['*'] })).status, 200);
    const { d, sender } = await verifiedDomain('held.example.com');
    const { type } = await typeWith(s.t.a, []);
    const utr = await automationWith(s.t.a, {
      type: 'welcome',
      target: `contacts_${type}`,
      group: await group(s.t.a),
      sender,
      emails: [{ subject: 'Welcome' }],
    });
    await act(s.t.a, '/automations/set-live', utr);
    await drainQueue(s.t);
    s.dns.zone = { ...passingZone(d), [d.domain]: { TXT: ['v=spf1 +all'] } };
    const failed = await checkNow(s.t.a, d.id);
    assert.equal(failed.status, 'failed');
    assert.deepEqual(
      (await eventTypes()).filter((e) => e.startsWith('sending_domain')),
      ['sending_domain.failed'],
    );
    const event = await s.t.database.db
      .selectFrom('webhook_events')
      .select('body')
      .where('type', '=', 'sending_domain.failed')
      .executeTakeFirstOrThrow();
    const data = JSON.parse(event.body).data;
    assert.deepEqual(Object.keys(data), ['id', 'domain', 'checks']);
    assert.equal(data.domain, 'held.example.com');
    assert.equal(data.checks.find((c: { name: string }) => c.name === 'spf').status, 'fail');

    await make.contact(s.t.a, { contact_type_id: type, email: 'joiner@inbox.test', first_name: 'Jo' });
    await drainQueue(s.t);
    assert.equal(s.t.sink!.to('joiner@inbox.test').length, 0, 'nothing leaves from a failing domain');
    const held = await s.t.database.db
      .selectFrom('mail_messages')
      .selectAll()
      .where('email', '=', 'joiner@inbox.test')
      .executeTakeFirstOrThrow();
    assert.equal(held.state, 'queued');
    assert.match(held.last_error ?? '', /domain fails authentication/);
    assert.ok(s.t.sink!.to('boss@notes.test').some((m) => m.subject === '[Campaign API] Sending domain fails authentication'));

    s.dns.zone = passingZone(d);
    assert.equal((await checkNow(s.t.a, d.id)).status, 'verified');
    assert.deepEqual(
      (await eventTypes()).filter((e) => e.startsWith('sending_domain')),
      ['sending_domain.failed', 'sending_domain.verified'],
    );
    s.t.clock.advance(11 * MINUTE);
    await drainQueue(s.t);
    const [mail] = s.t.sink!.to('joiner@inbox.test');
    assert.equal(mail.subject, 'Welcome');
    const [sig] = await dkimOf(mail.raw);
    assert.equal(sig.status.result, 'pass');
    assert.equal(sig.signingDomain, 'held.example.com');
  });

  it('checks every domain again each hour on the app clock, in the scheduler lane', async () => {
    const d = await addDomain(s.t.a, 'hourly.example.com');
    s.dns.zone = passingZone(d);
    const first = await s.t.database.db
      .selectFrom('sending_domains')
      .select('last_checked_at')
      .where('id', '=', d.id)
      .executeTakeFirstOrThrow();
    assert.equal(first.last_checked_at, null);
    // A domain never checked is due now.
    assert.equal((await domainRecheckTask.nextDueAt!(s.t.deps, s.t.clock.now()))!.getTime() <= s.t.clock.now().getTime(), true);
    await drainQueue(s.t);
    const after = await s.t.a.get('/sending-domains/details', { id: d.id });
    assert.equal(after.body.message.domain.status, 'verified');
    const checkedAt = after.body.message.domain.last_checked_at;
    s.dns.zone = { ...passingZone(d), [d.records[0].host]: {} };
    s.t.clock.advance(59 * MINUTE);
    await drainQueue(s.t);
    assert.equal(
      (await s.t.a.get('/sending-domains/details', { id: d.id })).body.message.domain.last_checked_at,
      checkedAt,
      'not an hour yet',
    );
    s.t.clock.advance(2 * MINUTE);
    await drainQueue(s.t);
    const later = (await s.t.a.get('/sending-domains/details', { id: d.id })).body.message.domain;
    assert.equal(later.status, 'failed');
    assert.notEqual(later.last_checked_at, checkedAt);
  });
});
