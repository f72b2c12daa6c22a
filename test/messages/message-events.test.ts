import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { trackingLinks } from '../../src/delivery/tracking.js';
import { drainQueue, make } from '../helpers.js';
import type { SmtpSink } from '../support/smtp-sink.js';
import { hrefsOf } from '../modules/clicks.helpers.js';
import { createSend, group, sendForm, typeWith, verifiedSender, type SendsContext } from '../modules/single-sends.helpers.js';
import { act, automationWith } from '../modules/automations-delivery.helpers.js';
import { postMail, reportOf, sendTo, setupBounces, type SentMessage } from '../inbound/bounces.helpers.js';
import { addEndpoint, changeEndpoint, deliveriesOf, eventsSince, lastEventId } from '../events/events.helpers.js';

const DESIGN = `<html><body><p>Hi ((first_name))</p>
<p><a href="https://shop.example.com/spring?who=((first_name))&amp;c=1">Shop</a></p></body></html>`;

describe("message events: the ledger writes each event's webhook event in its producer's transaction", () => {
  let t: SendsContext & { sink: SmtpSink };
  let links: ReturnType<typeof trackingLinks>;
  let endpointA: number;
  let endpointB: number;
  let seq = 0;
  const addr = (tag: string) => `${tag}.${++seq}@example.com`;

  before(async () => {
    t = await setupBounces();
    links = trackingLinks(t.config);
    endpointA = await addEndpoint(t.database, t.a.keys!.user_id);
    endpointB = await addEndpoint(t.database, t.b.keys!.user_id);
  });
  after(() => t.close());

  const row = (id: number) => t.database.db.selectFrom('mail_messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const utrOf = async (sendId: number) =>
    (await t.database.db.selectFrom('single_sends').select('utr').where('id', '=', sendId).executeTakeFirstOrThrow()).utr;

  /** The data every message event of `m` carries. */
  async function dataOf(m: SentMessage, messageId: string | null = m.messageId) {
    const r = await row(m.id);
    return { source: 'single_send', utr: await utrOf(m.sendId), email: m.email, contact_id: r.contact_id, message_id: messageId };
  }

  test('message.delivered: one per accepted message, with its send, address, contact and Message-ID', async () => {
    const since = await lastEventId(t.database);
    const sent = await sendTo(t, t.a, [addr('ann'), addr('bob')]);
    const events = await eventsSince(t.database, since, 'message.delivered');
    assert.equal(events.length, 2);
    for (const m of sent) {
      const e = events.find((x) => x.body.data.email === m.email)!;
      assert.deepEqual(e.body.data, await dataOf(m));
      assert.equal(typeof e.body.data.contact_id, 'number');
      assert.equal(e.body.type, 'message.delivered');
      assert.equal(e.emailKey, m.email);
      assert.equal(e.userId, t.a.keys!.user_id);
    }
    assert.equal(await deliveriesOf(t.database, endpointB), 0, "another account's endpoint gets nothing");
  });

  test('message.bounced at the SMTP answer: hard or soft by the answer, no Message-ID (none was accepted), not delivered', async () => {
    const gone = addr('gone');
    t.sink.reject(gone, 550, { text: '5.1.1 User unknown' });
    try {
      const since = await lastEventId(t.database);
      const { type } = await typeWith(t.a, [[gone]]);
      const base = { sender: await verifiedSender(t, t.a), group: await group(t.a), type };
      const utr = await createSend(t.a, sendForm(base));
      await drainQueue(t);
      const events = (await eventsSince(t.database, since)).filter((e) => e.type.startsWith('message.'));
      assert.deepEqual(
        events.map((e) => e.type),
        ['message.bounced'],
      );
      const m = await t.database.db.selectFrom('mail_messages').selectAll().where('email', '=', gone).executeTakeFirstOrThrow();
      assert.deepEqual(events[0].body.data, {
        source: 'single_send',
        utr,
        email: gone,
        contact_id: m.contact_id,
        message_id: null,
        type: 'hard',
      });
    } finally {
      t.sink.acceptAll();
    }
  });

  test('message.bounced reported after the accept: once, however many reports of it come', async () => {
    const [m] = await sendTo(t, t.a, [addr('later')]);
    const since = await lastEventId(t.database);
    const raw = reportOf('postfix-dsn-user-unknown', m);
    assert.equal((await postMail(t, raw)).body.message.type, 'hard');
    await postMail(t, raw);
    await postMail(t, reportOf('gmail-dsn', m));
    const events = await eventsSince(t.database, since);
    assert.deepEqual(
      events.map((e) => e.type),
      ['message.bounced'],
    );
    assert.deepEqual(events[0].body.data, { ...(await dataOf(m)), type: 'hard' });
    // A soft one through the keyed report route.
    const [s] = await sendTo(t, t.a, [addr('full')]);
    const since2 = await lastEventId(t.database);
    const r = await t.a.post('/bounces/report', { email: s.email, type: 'soft', reason: 'Mailbox full', message_id: `<${s.messageId}>` });
    assert.equal(r.status, 200, r.text);
    const soft = await eventsSince(t.database, since2);
    assert.deepEqual(
      soft.map((e) => [e.type, e.body.data]),
      [['message.bounced', { ...(await dataOf(s)), type: 'soft' }]],
    );
  });

  test('message.complained and contact.unsubscribed (global) for a complaint, once each', async () => {
    const [m] = await sendTo(t, t.a, [addr('angry')]);
    const since = await lastEventId(t.database);
    const raw = reportOf('arf-abuse', m);
    assert.equal((await postMail(t, raw)).body.message.kind, 'complaint');
    await postMail(t, raw);
    await postMail(t, reportOf('arf-abuse', m, { verp: 'x@y.example' }));
    const events = await eventsSince(t.database, since);
    const data = await dataOf(m);
    assert.deepEqual(
      events.map((e) => [e.type, e.body.data]),
      [
        ['message.complained', data],
        ['contact.unsubscribed', { email: m.email, scope: 'global', contact_id: data.contact_id }],
      ],
    );
    // A complaint about an address already on the global list: the complaint only.
    const [again] = await sendTo(t, t.a, [addr('twice')]);
    await t.a.post('/global-unsubscribes/save', { email_address: again.email });
    const since2 = await lastEventId(t.database);
    await postMail(t, reportOf('arf-abuse', again));
    assert.deepEqual(
      (await eventsSince(t.database, since2)).map((e) => e.type),
      ['message.complained'],
    );
  });

  test('message.opened: one per counted open of the pixel (the first and the later ones), data.machine says whose', async () => {
    const [m] = await sendTo(t, t.a, [addr('reader')]);
    const since = await lastEventId(t.database);
    const pixel = `/t/open/${links.openToken(m.id)}.gif`;
    // Apple Mail Privacy Protection's proxy first (a machine), then a person's mail client twice.
    const apple = await t.app.inject({ method: 'GET', url: pixel, headers: { 'user-agent': 'Mozilla/5.0' } });
    assert.equal(apple.statusCode, 200);
    for (let i = 0; i < 2; i++) assert.equal((await t.anon.get(pixel)).status, 200);
    // HEAD counts nothing, so it has no event.
    await t.app.inject({ method: 'HEAD', url: pixel });
    const events = await eventsSince(t.database, since);
    assert.equal(events.length, 3);
    const data = await dataOf(m);
    assert.deepEqual(
      events.map((e) => [e.type, e.body.data]),
      [
        ['message.opened', { ...data, machine: true }],
        ['message.opened', { ...data, machine: false }],
        ['message.opened', { ...data, machine: false }],
      ],
    );
  });

  test('message.clicked: one per counted click, with the URL the redirect went to (placeholders filled)', async () => {
    const email = addr('clicker');
    const { type } = await typeWith(t.a, [[email, 'Zoë']]);
    const base = { sender: await verifiedSender(t, t.a), group: await group(t.a), type };
    const utr = await createSend(t.a, sendForm(base, { template_html: DESIGN }));
    await drainQueue(t);
    const mail = t.sink.to(email)[0];
    const click = hrefsOf(mail.html!).find((h) => h.includes('/t/click/'))!;
    const since = await lastEventId(t.database);
    const path = new URL(click).pathname;
    const res = await t.anon.get(path);
    assert.equal(res.status, 302);
    await t.anon.get(path);
    const events = await eventsSince(t.database, since);
    const m = await t.database.db.selectFrom('mail_messages').selectAll().where('email', '=', email).executeTakeFirstOrThrow();
    const data = { source: 'single_send', utr, email, contact_id: m.contact_id, message_id: m.message_id };
    const url = 'https://shop.example.com/spring?who=Zoë&c=1';
    // A click counts an open for a message never opened, but that is no pixel hit: no message.opened.
    assert.deepEqual(
      events.map((e) => [e.type, e.body.data]),
      [
        ['message.clicked', { ...data, url }],
        ['message.clicked', { ...data, url }],
      ],
    );
    assert.equal(res.headers.location, encodeURI(url));
    // A scanner's click (no User-Agent) redirects the same, and has no event.
    const since2 = await lastEventId(t.database);
    const scanner = await t.app.inject({ method: 'GET', url: path, headers: { 'user-agent': '' } });
    assert.equal(scanner.statusCode, 302);
    assert.deepEqual(await eventsSince(t.database, since2), []);
  });

  test('automation mail: source automation and the automation utr', async () => {
    const sender = await verifiedSender(t, t.a);
    const { type } = await typeWith(t.a, []);
    const utr = await automationWith(t.a, {
      type: 'welcome',
      target: `contacts_${type}`,
      group: await group(t.a),
      sender,
      emails: [{ subject: 'Welcome' }],
    });
    await act(t.a, '/automations/set-live', utr);
    const email = addr('auto');
    const contactId = await make.contact(t.a, { contact_type_id: type, email });
    const since = await lastEventId(t.database);
    await drainQueue(t);
    const m = await t.database.db.selectFrom('mail_messages').selectAll().where('email', '=', email).executeTakeFirstOrThrow();
    assert.deepEqual(
      (await eventsSince(t.database, since, 'message.delivered')).map((e) => e.body.data),
      [{ source: 'automation', utr, email, contact_id: contactId, message_id: m.message_id }],
    );
  });

  test("the service's own mail and test sends have no message events", async () => {
    assert.equal((await t.a.post('/notification-recipient/save', { email_address: 'boss@example.com', email_owner: 'Boss' })).status, 200);
    const [m] = await sendTo(t, t.a, [addr('x')]);
    const since = await lastEventId(t.database);
    const test = await t.a.post('/single/send/test', { utr: await utrOf(m.sendId), emails: ['tester@example.com'] });
    assert.equal(test.status, 200, test.text);
    await drainQueue(t);
    assert.equal(t.sink.to('tester@example.com').length, 1);
    const messages = (await eventsSince(t.database, since)).filter((e) => e.type.startsWith('message.'));
    assert.deepEqual(messages, []);
    // The notification mails (single_send.completed) went out, with no message event either.
    assert.ok(t.sink.to('boss@example.com').length > 0);
  });

  test('nothing is written without an endpoint taking the type: none, disabled, another type', async () => {
    const [m] = await sendTo(t, t.a, [addr('quiet')]);
    const pixel = `/t/open/${links.openToken(m.id)}.gif`;
    for (const change of [{ enabled: 0 as const }, { enabled: 1 as const, events: ['message.clicked', 'contact.unsubscribed'] }]) {
      await changeEndpoint(t.database, endpointA, change);
      const since = await lastEventId(t.database);
      await t.anon.get(pixel);
      await sendTo(t, t.a, [addr('quiet')]);
      assert.deepEqual(await eventsSince(t.database, since), [], JSON.stringify(change));
    }
    await t.database.db.deleteFrom('webhook_endpoints').where('id', '=', endpointA).execute();
    const since = await lastEventId(t.database);
    await t.anon.get(pixel);
    await sendTo(t, t.a, [addr('quiet')]);
    assert.deepEqual(await eventsSince(t.database, since), []);
    // Only the opened type: exactly that.
    endpointA = await addEndpoint(t.database, t.a.keys!.user_id, { events: ['message.opened'] });
    await t.anon.get(pixel);
    assert.deepEqual(
      (await eventsSince(t.database, since)).map((e) => e.type),
      ['message.opened'],
    );
    assert.equal(await deliveriesOf(t.database, endpointA), 1);
  });
});
