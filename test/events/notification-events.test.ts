import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { verificationLink } from '../../src/modules/senders/senders.mail.js';
import { sqlDateTime } from '../../src/util/time.js';
import { drainQueue, make } from '../helpers.js';
import { upload } from '../modules/contacts-csv.helpers.js';
import { senderForm } from '../modules/senders.helpers.js';
import { act, automationWith } from '../modules/automations-delivery.helpers.js';
import {
  createSend,
  group,
  sendForm,
  sendRow,
  setupSends,
  typeWith,
  verifiedSender,
  type SendsContext,
} from '../modules/single-sends.helpers.js';
import { addEndpoint, changeEndpoint, deliveriesOf, eventsSince, lastEventId } from './events.helpers.js';

describe('the notification events go to webhook endpoints too, with the details of their mail as data', () => {
  let t: SendsContext;
  let endpointA: number;
  let endpointB: number;

  before(async () => {
    t = await setupSends({ sink: true });
    endpointA = await addEndpoint(t.database, t.a.keys!.user_id);
    endpointB = await addEndpoint(t.database, t.b.keys!.user_id);
    // A notification recipient, so the same call also queues the mail (the event does not depend on it).
    assert.equal((await t.a.post('/notification-recipient/save', { email_address: 'boss@example.com', email_owner: 'Boss' })).status, 200);
  });
  after(() => t.close());

  const written = async (since: number, type?: string) => (await eventsSince(t.database, since, type)).map((e) => [e.type, e.body.data]);

  test('single_send.completed when a send has delivered everything', async () => {
    const { type } = await typeWith(t.a, [['ann@example.com'], ['bob@example.com']]);
    const base = { sender: await verifiedSender(t, t.a), group: await group(t.a), type };
    const utr = await createSend(t.a, sendForm(base));
    const since = await lastEventId(t.database);
    await drainQueue(t);
    const send = await sendRow(t, utr);
    assert.deepEqual(await written(since, 'single_send.completed'), [
      ['single_send.completed', { single_send_name: 'Spring news', utr, triggered: 2, delivered: 2, bounces: 0, sent_at: send.sent_at }],
    ]);
    const [e] = await eventsSince(t.database, since, 'single_send.completed');
    assert.equal(e.emailKey, null);
    assert.ok(t.sink!.to('boss@example.com').some((m) => /Single send completed/.test(m.subject)));
  });

  test('contacts.imported for a committed import; a malformed file rolled back writes nothing', async () => {
    const type = await make.contactType(t.a);
    let since = await lastEventId(t.database);
    const r = await upload(t.a, type, 'email;country;first_name\nnew1@example.com;101;Ann\nnew2@example.com;IN;Bob\nbroken;101;x\n');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(await written(since), [['contacts.imported', { contact_type_id: type, created: 2, updated: 0, skipped: 1 }]]);

    since = await lastEventId(t.database);
    const bad = await upload(t.a, type, 'email;country;first_name\nnew3@example.com;101;Cy\n"open;101;x\n');
    assert.equal(bad.status, 422);
    assert.deepEqual(await written(since), []);
  });

  test('sender.verified when the mailed link is opened (once)', async () => {
    const form = senderForm({ from_name: 'Acme News' });
    const saved = await t.a.post('/sender/save', form);
    assert.equal(saved.status, 200, saved.text);
    const id: number = saved.body.id;
    const link = new URL(verificationLink(t.config, { id, from_email: form.from_email }));
    const since = await lastEventId(t.database);
    for (let i = 0; i < 2; i++) {
      const res = await t.app.inject({ method: 'GET', url: link.pathname + link.search });
      assert.equal(res.statusCode, 200);
    }
    assert.deepEqual(await written(since), [
      ['sender.verified', { sender_id: id, from_name: 'Acme News', from_email: form.from_email, nickname: form.nickname }],
    ]);
  });

  test('automation.live and automation.paused', async () => {
    const sender = await verifiedSender(t, t.a);
    const { type } = await typeWith(t.a, []);
    const utr = await automationWith(t.a, {
      type: 'welcome',
      target: `contacts_${type}`,
      group: await group(t.a),
      sender,
      emails: [{ subject: 'Welcome' }],
      name: 'Onboarding',
    });
    const since = await lastEventId(t.database);
    await act(t.a, '/automations/set-live', utr);
    await act(t.a, '/automations/pause', utr);
    const row = await t.database.db.selectFrom('automations').select('live_at').where('utr', '=', utr).executeTakeFirstOrThrow();
    const data = { automation_name: 'Onboarding', utr, live_at: sqlDateTime(new Date(row.live_at!)) };
    assert.deepEqual(await written(since), [
      ['automation.live', data],
      ['automation.paused', data],
    ]);
    assert.equal(await deliveriesOf(t.database, endpointB), 0, "another account's endpoint gets nothing");
  });

  test('nothing is written for an endpoint that is disabled or takes other types', async () => {
    const sender = await verifiedSender(t, t.a);
    const { type } = await typeWith(t.a, []);
    const utr = await automationWith(t.a, {
      type: 'welcome',
      target: `contacts_${type}`,
      group: await group(t.a),
      sender,
      emails: [{ subject: 'Hi' }],
    });
    for (const change of [{ enabled: 0 as const }, { enabled: 1 as const, events: ['automation.paused'] }]) {
      await changeEndpoint(t.database, endpointA, change);
      const since = await lastEventId(t.database);
      await act(t.a, '/automations/set-live', utr);
      assert.deepEqual(await written(since), [], JSON.stringify(change));
      await act(t.a, '/automations/pause', utr);
    }
    // The last round's endpoint took automation.paused: that one was written.
    const paused = await eventsSince(t.database, 0, 'automation.paused');
    assert.equal(paused.at(-1)!.body.data.utr, utr);
  });
});
