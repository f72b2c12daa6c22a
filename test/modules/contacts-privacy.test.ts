import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertNeedsKeys, drainQueue, fieldErrors, make } from '../helpers.js';
import { act, automationWith } from './automations-delivery.helpers.js';
import { DESIGN, messageTo, ok, oneClickUnsubscribe, openAndClick } from './contacts-privacy.helpers.js';
import { createSegment } from './segments.helpers.js';
import { startDueSends } from '../../src/modules/single-sends/single-sends.engine.js';
import {
  createSend,
  group,
  Rnf,
  sendForm,
  setupSends,
  SQL_TS,
  TS,
  typeWith,
  verifiedSender,
  type SendsContext,
} from './single-sends.helpers.js';

describe('GET /contacts/export', () => {
  let t: SendsContext;
  let sender: number;
  let grp: number;

  before(async () => {
    t = await setupSends({ sink: true });
    sender = await verifiedSender(t, t.a);
    grp = await group(t.a);
    await drainQueue(t); // the sender's verification mail
  });
  after(() => t.close());

  test('needs keys', async () => {
    await assertNeedsKeys(t.anon, [['GET', '/contacts/export?email=a@example.com']]);
  });

  test('checks the address like every email field', async () => {
    assert.deepEqual((await t.a.get('/contacts/export')).body, fieldErrors({ email: ['The email field is required.'] }));
    assert.deepEqual(
      (await t.a.get('/contacts/export', { email: 'not-an-address' })).body,
      fieldErrors({ email: ['The email must be a valid email address.'] }),
    );
    assert.equal((await t.a.get('/contacts/export', { email: 'not-an-address' })).status, 422);
  });

  test('an address the account does not hold, or only another account holds: Record not found', async () => {
    const r = await t.a.get('/contacts/export', { email: 'nobody@example.com' });
    assert.equal(r.status, 404);
    assert.deepEqual(r.body, Rnf);
    await make.contact(t.b, { email: 'only.b@example.com' });
    assert.deepEqual((await t.a.get('/contacts/export', { email: 'only.b@example.com' })).body, Rnf);
    assert.equal((await t.b.get('/contacts/export', { email: 'only.b@example.com' })).status, 200);
  });

  test('everything the account holds about an address: contacts, segments, unsubscribes, suppression, messages', async () => {
    const address = 'Export.Person@Example.com';
    const { type, ids } = await typeWith(t.a, [[address, 'Ex']]);
    const other = await make.contactType(t.a);
    const second = await make.contact(t.a, { contact_type_id: other, email: 'export.person@example.com', first_name: 'Second' });
    // A deleted record is still data the account holds: it is exported too, with its deleted_at.
    const gone = await make.contact(t.a, { contact_type_id: await make.contactType(t.a), email: address });
    assert.equal((await t.a.delete('/contacts/delete', { contact_id: gone })).status, 200);
    // By condition, and by hand (in a segment whose conditions do not match it).
    const byCondition = await createSegment(t.a, {
      contact_type_id: type,
      select_field: ['email'],
      select_operator: ['starts with'],
      value: ['export.'],
    });
    const byHand = await createSegment(t.a, {
      contact_type_id: other,
      select_field: ['first_name'],
      select_operator: ['is'],
      value: ['Nobody'],
    });
    await ok(t.a, 'POST', '/segment/email/store', {
      segment_id: byHand,
      first_name: 'Ex',
      last_name: 'Hand',
      email: 'EXPORT.person@example.com',
    });
    await createSegment(t.a, { contact_type_id: type, select_field: ['first_name'], select_operator: ['is'], value: ['Nobody'] });

    // A single send, opened and clicked; an automation email; both through the SMTP sink.
    const utr = await createSend(
      t.a,
      sendForm({ sender, group: grp, type }, { template_html: DESIGN, subject: 'News for ((first_name))' }),
    );
    const welcome = await typeWith(t.a, []);
    const auto = await automationWith(t.a, {
      type: 'welcome',
      target: `contacts_${welcome.type}`,
      group: grp,
      sender,
      emails: [{ subject: 'Welcome aboard' }],
    });
    await act(t.a, '/automations/set-live', auto);
    await make.contact(t.a, { contact_type_id: welcome.type, email: address });
    await drainQueue(t);
    const row = await messageTo(t, utr, address);
    assert.equal(row.state, 'sent');
    await openAndClick(t, Number(row.id), address);

    // A send whose message is queued (its recipients resolved, not sent yet) shows as queued.
    const later = await createSend(t.a, sendForm({ sender, group: grp, type: other }, { subject: 'Later news' }));
    await startDueSends(t.deps, t.clock.now());
    const queued = await t.a.get('/contacts/export', { email: address });
    assert.deepEqual(queued.body.message.messages.at(-1), {
      source: 'single_send',
      utr: later,
      subject: 'Later news',
      state: 'queued',
      sent_at: null,
      opens: 0,
      clicks: 0,
    });

    // Unsubscribed from the send's group (its one-click link) and globally; suppressed by a hard
    // bounce: the queued message is then not mailed (failed).
    await oneClickUnsubscribe(t, Number(row.id));
    await ok(t.a, 'POST', '/global-unsubscribes/save', { email_address: 'export.person@EXAMPLE.com' });
    await ok(t.a, 'POST', '/bounces/report', { email: address, type: 'hard', reason: '550 5.1.1 user unknown' });
    await drainQueue(t);

    const r = await t.a.get('/contacts/export', { email: 'EXPORT.PERSON@example.com' });
    assert.equal(r.status, 200, r.text);
    const m = r.body.message;
    assert.equal(r.body.status, 'success');
    assert.deepEqual(Object.keys(m), ['contacts', 'segments', 'unsubscribes', 'suppression', 'messages', 'consents']);
    const details = (id: number) => t.a.get('/contacts/details', { contact_id: id }).then((d) => d.body.message.contact);
    assert.deepEqual(
      m.contacts.filter((c: { deleted_at: string | null }) => c.deleted_at === null),
      [await details(ids[0]), await details(second), ...(await Promise.all(m.contacts.slice(3).map((c: { id: number }) => details(c.id))))],
    );
    assert.equal(m.contacts.length, 4);
    const deleted = m.contacts.find((c: { id: number }) => c.id === gone);
    assert.match(deleted.deleted_at, TS);
    assert.equal(deleted.email, address);
    assert.deepEqual(m.segments, [byCondition, byHand]);
    assert.deepEqual(m.unsubscribes, { global: true, groups: [grp] });
    assert.deepEqual(Object.keys(m.suppression), ['email', 'reason', 'detail', 'created_at']);
    assert.equal(m.suppression.reason, 'hard_bounce');
    assert.equal(m.suppression.email, address);
    const laterRow = await messageTo(t, later, address);
    assert.equal(laterRow.state, 'suppressed');
    assert.equal(m.messages.length, 3);
    const [news, welcomeMail, laterMail] = m.messages;
    assert.match(news.sent_at, SQL_TS);
    assert.deepEqual(
      { ...news, sent_at: 'x' },
      {
        source: 'single_send',
        utr,
        subject: 'News for ((first_name))',
        state: 'delivered',
        sent_at: 'x',
        opens: 1,
        clicks: 1,
      },
    );
    assert.deepEqual(
      { ...welcomeMail, sent_at: 'x' },
      {
        source: 'automation',
        utr: auto,
        subject: 'Welcome aboard',
        state: 'delivered',
        sent_at: 'x',
        opens: 0,
        clicks: 0,
      },
    );
    assert.deepEqual(laterMail, {
      source: 'single_send',
      utr: later,
      subject: 'Later news',
      state: 'failed',
      sent_at: null,
      opens: 0,
      clicks: 0,
    });
  });

  test("another account's copy of the same address is not in the export", async () => {
    const shared = 'shared.export@example.com';
    const mine = await make.contact(t.a, { email: shared });
    await make.contact(t.b, { email: shared });
    await ok(t.b, 'POST', '/global-unsubscribes/save', { email_address: shared });
    const r = await t.a.get('/contacts/export', { email: shared });
    assert.deepEqual(
      r.body.message.contacts.map((c: { id: number }) => c.id),
      [mine],
    );
    assert.deepEqual(r.body.message.unsubscribes, { global: false, groups: [] });
    assert.equal(r.body.message.suppression, null);
    assert.deepEqual(r.body.message.messages, []);
  });
});
