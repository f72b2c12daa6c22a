import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertNeedsKeys, fieldErrors } from '../helpers.js';
import { startDueSends } from '../../src/modules/single-sends/single-sends.engine.js';
import {
  createSend,
  details,
  group,
  messagesOf,
  Rnf,
  sendForm,
  sendRow,
  setupSends,
  SQL_TS,
  TS,
  typeWith,
  UUID,
  verifiedSender,
  type SendsContext,
} from './single-sends.helpers.js';

describe('single sends: the API', () => {
  let t: SendsContext;
  let base: { sender: number; group: number; type: number };
  before(async () => {
    t = await setupSends();
    const { type } = await typeWith(t.a, [['one@example.com'], ['two@example.com']]);
    base = { sender: await verifiedSender(t, t.a), group: await group(t.a), type };
  });
  after(() => t.close());

  test('every route needs the key headers', async () => {
    await assertNeedsKeys(t.anon, [
      ['GET', '/single-send/list'],
      ['POST', '/single/send/create'],
      ['POST', '/single/send/duplicate'],
      ['GET', '/single/send/duplicate'],
      ['GET', '/single-send/details'],
      ['POST', '/single/send/update'],
      ['DELETE', '/single/send/delete'],
      ['POST', '/single/send/bulk-delete'],
    ]);
  });

  test('create answers the new utr; details shows the send as an array of one, ready, with the sender copied in', async () => {
    const r = await t.a.post('/single/send/create', sendForm(base, { exclude_specific_recipient_id: [] }));
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.body), ['status', 'message']);
    assert.match(r.body.message.utr, UUID);
    const d = await t.a.get('/single-send/details', { utr: r.body.message.utr });
    assert.equal(d.status, 200);
    assert.equal(d.body.message.singleSend.length, 1);
    const s = d.body.message.singleSend[0];
    const sender = (await t.a.get('/sender/details', { sender_id: base.sender })).body.message.sender;
    assert.deepEqual(
      { ...s, id: 0, user_id: 0, created_at: '', updated_at: '' },
      {
        id: 0,
        user_id: 0,
        template_id: 1,
        recipient_id: [{ id: String(base.type), table: 'contacts' }],
        exclude_specific_recipient_id: [],
        sender_id: base.sender,
        unsubscribe_group_id: base.group,
        single_send_name: 'Spring news',
        from_sender: sender.from_email,
        reply_to: 'replies@example.com',
        sender_name: 'Acme News',
        sender_address: s.sender_address,
        subject: 'News for ((first_name))',
        preheader: 'What is new this spring',
        schedule_type: 0,
        schedule_date: '0000-00-00',
        schedule_time: '00:00:00',
        timezone: null,
        status: 1,
        utr: r.body.message.utr,
        template_json: null,
        template_html: '<html><body><p>Hello ((first_name))</p></body></html>',
        triggered: 0,
        delivered: 0,
        unique_opens: 0,
        total_opens: 0,
        bounces: 0,
        unsubscribes: 0,
        track_clicks: 1,
        unique_clicks: 0,
        total_clicks: 0,
        unique_open_token: {},
        sent_at: null,
        ab_test: 0,
        ab_test_percent: null,
        ab_winner_metric: null,
        ab_wait_minutes: null,
        ab_wait_ends_at: null,
        variants: [],
        ab_winner: null,
        created_at: '',
        updated_at: '',
      },
    );
    assert.match(s.sender_address, /^1 Main Street, Floor 2, .+ 400001, India$/);
    assert.match(s.created_at, TS);
    assert.equal((await sendRow(t, s.utr)).due_at, '2030-01-15T10:00:00.000000Z');
  });

  test('create without any parameter names every required one', async () => {
    const r = await t.a.post('/single/send/create', {});
    assert.equal(r.status, 422);
    assert.deepEqual(
      r.body,
      fieldErrors({
        template_id: ['The template id field is required.'],
        sender_id: ['The sender id field is required.'],
        unsubscribe_group_id: ['The unsubscribe group id field is required.'],
        single_send_name: ['The single send name field is required.'],
        subject: ['The subject field is required.'],
        preheader: ['The preheader field is required.'],
        recipient_id: ['The recipient id field is required.'],
        schedule_type: ['The schedule type field is required.'],
      }),
    );
  });

  test("refuses an unverified sender, another account's sender, group and recipient keys, and malformed keys", async () => {
    const unverified = (await t.a.post('/sender/save', (await import('./senders.helpers.js')).senderForm())).body.id;
    const bSender = await verifiedSender(t, t.b);
    const bGroup = await group(t.b);
    const { type: bType } = await typeWith(t.b, [['b@example.com']]);
    const cases: Array<[Record<string, unknown>, Record<string, string[]>]> = [
      [{ sender_id: unverified }, { sender_id: ['The selected sender id is not verified.'] }],
      [{ sender_id: bSender }, { sender_id: ['The selected sender id is invalid.'] }],
      [{ unsubscribe_group_id: bGroup }, { unsubscribe_group_id: ['The selected unsubscribe group id is invalid.'] }],
      [{ recipient_id: [`contacts_${bType}`] }, { recipient_id: ['The selected recipient id is invalid.'] }],
      [{ recipient_id: ['segments_999999'] }, { recipient_id: ['The selected recipient id is invalid.'] }],
      [{ recipient_id: ['people_1'] }, { recipient_id: ['The selected recipient id is invalid.'] }],
      [{ recipient_id: [`contacts_${base.type}`, 'contacts_x'] }, { recipient_id: ['The selected recipient id is invalid.'] }],
      [
        { exclude_specific_recipient_id: [`contacts_${bType}`] },
        { exclude_specific_recipient_id: ['The selected exclude specific recipient id is invalid.'] },
      ],
      [{ template_id: 999 }, { template_id: ['The selected template id is invalid.'] }],
      [{ template_id: 'x' }, { template_id: ['The template id must be an integer.'] }],
      [{ sender_id: 'x' }, { sender_id: ['The sender id must be an integer.'] }],
    ];
    for (const [extra, errors] of cases) {
      const r = await t.a.post('/single/send/create', sendForm(base, extra));
      assert.equal(r.status, 422, JSON.stringify(extra));
      assert.deepEqual(r.body, fieldErrors(errors), JSON.stringify(extra));
    }
  });

  test('a deleted segment or contact type is no longer a valid recipient key', async () => {
    const { type } = await typeWith(t.a, [['gone@example.com']]);
    assert.equal((await t.a.delete('/contacts-type/delete', { contact_type_id: type })).status, 200);
    const r = await t.a.post('/single/send/create', sendForm(base, { recipient_id: [`contacts_${type}`] }));
    assert.deepEqual(r.body, fieldErrors({ recipient_id: ['The selected recipient id is invalid.'] }));
  });

  test('only one of template_json and template_html, and a JSON design that compiles', async () => {
    const both = await t.a.post('/single/send/create', sendForm(base, { template_json: '{"tagName":"mjml","children":[]}' }));
    assert.equal(both.status, 422);
    assert.deepEqual(Object.keys(both.body.errors).sort(), ['template_html', 'template_json']);
    const broken = await t.a.post('/single/send/create', sendForm(base, { template_html: '', template_json: '{"tagName":"mjml"' }));
    assert.equal(broken.status, 422);
    assert.deepEqual(Object.keys(broken.body.errors), ['template_json']);
    const wrongShape = await t.a.post('/single/send/create', sendForm(base, { template_html: '', template_json: '{"tagName":"div"}' }));
    assert.equal(wrongShape.status, 422);
    assert.deepEqual(Object.keys(wrongShape.body.errors), ['template_json']);
    const design = JSON.stringify({
      tagName: 'mjml',
      attributes: {},
      children: [
        {
          tagName: 'mj-body',
          attributes: {},
          children: [
            {
              tagName: 'mj-section',
              attributes: {},
              children: [
                { tagName: 'mj-column', attributes: {}, children: [{ tagName: 'mj-text', attributes: {}, content: 'Hi ((first_name))' }] },
              ],
            },
          ],
        },
      ],
    });
    const good = await createSend(t.a, sendForm(base, { template_html: '', template_json: design }));
    const d = await details(t.a, good);
    assert.equal(d.template_json, design);
    assert.equal(d.template_html, null);
  });

  test('CR or LF in the name or subject is refused (they reach mail headers)', async () => {
    const r = await t.a.post('/single/send/create', sendForm(base, { single_send_name: 'a\r\nBcc: x@example.com', subject: 'b\nX: y' }));
    assert.equal(r.status, 422);
    assert.deepEqual(
      r.body,
      fieldErrors({ single_send_name: ['The single send name format is invalid.'], subject: ['The subject format is invalid.'] }),
    );
  });

  test('the schedule: type 0 or 1, date and time required when scheduled, valid date, time and IANA zone', async () => {
    const cases: Array<[Record<string, unknown>, Record<string, string[]>]> = [
      [{ schedule_type: 2 }, { schedule_type: ['The selected schedule type is invalid.'] }],
      [
        { schedule_type: 1 },
        {
          schedule_date: ['The schedule date field is required when schedule type is 1.'],
          schedule_time: ['The schedule time field is required when schedule type is 1.'],
        },
      ],
      [
        { schedule_type: 1, schedule_date: '2030-02-30', schedule_time: '10:00' },
        { schedule_date: ['The schedule date is not a valid date.'] },
      ],
      [
        { schedule_type: 1, schedule_date: '30-01-2030', schedule_time: '10:00' },
        { schedule_date: ['The schedule date is not a valid date.'] },
      ],
      [
        { schedule_type: 1, schedule_date: '2030-02-01', schedule_time: '24:00' },
        { schedule_time: ['The schedule time format is invalid.'] },
      ],
      [
        { schedule_type: 1, schedule_date: '2030-02-01', schedule_time: '9am' },
        { schedule_time: ['The schedule time format is invalid.'] },
      ],
      [
        { schedule_type: 1, schedule_date: '2030-02-01', schedule_time: '10:00', timezone: 'Mars/Olympus' },
        { timezone: ['The selected timezone is invalid.'] },
      ],
      [
        { schedule_type: 1, schedule_date: '2030-02-01', schedule_time: '10:00', timezone: '+03:00' },
        { timezone: ['The selected timezone is invalid.'] },
      ],
    ];
    for (const [extra, errors] of cases) {
      const r = await t.a.post('/single/send/create', sendForm(base, extra));
      assert.equal(r.status, 422, JSON.stringify(extra));
      assert.deepEqual(r.body, fieldErrors(errors), JSON.stringify(extra));
    }
  });

  test('a scheduled send keeps its local date and time and zone, and is due at the UTC moment they mean', async () => {
    const utc = await createSend(t.a, sendForm(base, { schedule_type: 1, schedule_date: '2030-02-01', schedule_time: '09:30' }));
    const d = await details(t.a, utc);
    assert.deepEqual([d.schedule_type, d.schedule_date, d.schedule_time, d.timezone, d.status], [1, '2030-02-01', '09:30:00', null, 1]);
    assert.equal((await sendRow(t, utc)).due_at, '2030-02-01T09:30:00.000000Z');
    const berlin = await createSend(
      t.a,
      sendForm(base, { schedule_type: 1, schedule_date: '2030-07-01', schedule_time: '09:30:15', timezone: 'Europe/Berlin' }),
    );
    assert.equal((await details(t.a, berlin)).timezone, 'Europe/Berlin');
    assert.equal((await sendRow(t, berlin)).due_at, '2030-07-01T07:30:15.000000Z');
  });

  test('list: the live sends newest first, whole or by page', async () => {
    const first = await createSend(t.a, sendForm(base, { single_send_name: 'First' }));
    const second = await createSend(t.a, sendForm(base, { single_send_name: 'Second' }));
    const r = await t.a.get('/single-send/list');
    assert.equal(r.status, 200);
    const utrs = r.body.message.singleSends.map((s: any) => s.utr);
    assert.ok(utrs.indexOf(second) < utrs.indexOf(first));
    const page = await t.a.get('/single-send/list', { page: 1, per_page: 1 });
    assert.equal(page.body.message.singleSends[0].utr, second);
    assert.equal(page.body.message.meta.total, utrs.length);
    assert.deepEqual((await t.b.get('/single-send/list')).body.message.singleSends, []);
  });

  test("details, update, duplicate and delete of an unknown or another account's utr: Record not found", async () => {
    const mine = await createSend(t.a, sendForm(base));
    for (const utr of [mine, 'nope', '']) {
      if (utr === mine) {
        assert.deepEqual((await t.b.get('/single-send/details', { utr })).body, Rnf);
        assert.equal((await t.b.get('/single-send/details', { utr })).status, 404);
        assert.deepEqual((await t.b.post('/single/send/duplicate', {}, { utr })).body, Rnf);
        assert.deepEqual((await t.b.delete('/single/send/delete', { utr })).body, Rnf);
        assert.deepEqual((await t.b.post('/single/send/bulk-delete', { strIds: [utr] })).body, Rnf);
        const bBase = {
          sender: await verifiedSender(t, t.b),
          group: await group(t.b),
          type: (await typeWith(t.b, [['bb@example.com']])).type,
        };
        const up = await t.b.post('/single/send/update', { utr, ...sendForm(bBase) });
        assert.equal(up.status, 404);
        assert.deepEqual(up.body, Rnf);
      } else {
        assert.deepEqual((await t.a.get('/single-send/details', { utr })).body, Rnf);
        assert.deepEqual((await t.a.get('/single/send/duplicate', { utr })).body, Rnf);
        assert.deepEqual((await t.a.delete('/single/send/delete', { utr })).body, Rnf);
      }
    }
    assert.equal((await details(t.a, mine)).status, 1);
  });

  test('update replaces the parameters and keeps the utr; a draft becomes ready', async () => {
    const utr = await createSend(t.a, sendForm(base));
    const r = await t.a.post('/single/send/update', {
      utr,
      ...sendForm(base, { subject: 'New subject', schedule_type: 1, schedule_date: '2030-03-01', schedule_time: '08:00' }),
    });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, { status: 'success', message: { utr } });
    const d = await details(t.a, utr);
    assert.deepEqual([d.subject, d.schedule_date, d.schedule_time, d.status], ['New subject', '2030-03-01', '08:00:00', 1]);
    const bad = await t.a.post('/single/send/update', { utr, ...sendForm(base, { subject: '' }) });
    assert.deepEqual(bad.body, fieldErrors({ subject: ['The subject field is required.'] }));
    const missing = await t.a.post('/single/send/update', sendForm(base));
    assert.deepEqual(missing.body, fieldErrors({ utr: ['The utr field is required.'] }));
  });

  test('update of a running or completed send: 409, nothing changed', async () => {
    const utr = await createSend(t.a, sendForm(base));
    await startDueSends(t.deps, t.clock.now());
    assert.equal((await details(t.a, utr)).status, 2);
    const running = await t.a.post('/single/send/update', { utr, ...sendForm(base, { subject: 'Changed' }) });
    assert.equal(running.status, 409);
    assert.match(running.body.errors, /running/);
    await t.database.db.updateTable('single_sends').set({ status: 3 }).where('utr', '=', utr).execute();
    const done = await t.a.post('/single/send/update', { utr, ...sendForm(base, { subject: 'Changed' }) });
    assert.equal(done.status, 409);
    assert.match(done.body.errors, /completed/);
    assert.equal((await details(t.a, utr)).subject, 'News for ((first_name))');
  });

  test('duplicate (POST and GET): a draft copy named "(copy)" with a fresh utr and zero statistics', async () => {
    const utr = await createSend(t.a, sendForm(base, { single_send_name: 'Original' }));
    await t.database.db
      .updateTable('single_sends')
      .set({
        triggered: 5,
        delivered: 4,
        bounces: 1,
        total_opens: 3,
        unique_opens: 2,
        unsubscribes: 1,
        status: 3,
        sent_at: '2030-01-15 10:00:00',
      })
      .where('utr', '=', utr)
      .execute();
    for (const method of ['POST', 'GET']) {
      const r = await t.a.request(method, '/single/send/duplicate', { query: { utr } });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.message, 'Duplicated Successfully');
      assert.match(r.body.utr, UUID);
      assert.notEqual(r.body.utr, utr);
      const copy = await details(t.a, r.body.utr);
      const original = await details(t.a, utr);
      assert.equal(copy.id, r.body.id);
      assert.equal(copy.single_send_name, 'Original (copy)');
      assert.deepEqual(
        [copy.status, copy.triggered, copy.delivered, copy.bounces, copy.total_opens, copy.unique_opens, copy.unsubscribes, copy.sent_at],
        [0, 0, 0, 0, 0, 0, 0, null],
      );
      assert.deepEqual(
        [copy.subject, copy.recipient_id, copy.template_html],
        [original.subject, original.recipient_id, original.template_html],
      );
      assert.equal((await sendRow(t, r.body.utr)).due_at, null);
    }
  });

  test('a draft never starts; updating it makes it ready', async () => {
    const utr = await createSend(t.a, sendForm(base));
    const copy = (await t.a.post('/single/send/duplicate', {}, { utr })).body.utr;
    t.clock.advance(60_000);
    await startDueSends(t.deps, t.clock.now());
    assert.equal((await details(t.a, copy)).status, 0);
    assert.equal((await t.a.post('/single/send/update', { utr: copy, ...sendForm(base) })).status, 200);
    assert.equal((await details(t.a, copy)).status, 1);
  });

  test('delete is soft; a running send is cancelled: its queued messages are not sent', async () => {
    const ready = await createSend(t.a, sendForm(base, { schedule_type: 1, schedule_date: '2031-01-01', schedule_time: '00:00' }));
    const r = await t.a.delete('/single/send/delete', { utr: ready });
    assert.deepEqual(r.body, { status: 'success', message: 'Deleted Successfully' });
    assert.deepEqual((await t.a.get('/single-send/details', { utr: ready })).body, Rnf);
    assert.ok((await sendRow(t, ready)).deleted_at);
    assert.ok(!(await t.a.get('/single-send/list')).body.message.singleSends.some((s: any) => s.utr === ready));

    const running = await createSend(t.a, sendForm(base));
    await startDueSends(t.deps, t.clock.now());
    assert.equal((await messagesOf(t, running)).length, 2);
    assert.equal((await t.a.delete('/single/send/delete', { utr: running })).status, 200);
    assert.deepEqual(
      (await messagesOf(t, running)).map((m) => m.state),
      ['cancelled', 'cancelled'],
    );
    assert.deepEqual((await t.a.delete('/single/send/delete', { utr: running })).body, Rnf);
  });

  test('bulk delete takes utrs; unknown ones are ignored; none of the account: Record not found', async () => {
    const one = await createSend(t.a, sendForm(base));
    const two = await createSend(t.a, sendForm(base));
    const r = await t.a.post('/single/send/bulk-delete', { strIds: [one, two, 'unknown'] });
    assert.deepEqual(r.body, { status: 'success', message: 'Deleted Successfully' });
    for (const utr of [one, two]) assert.deepEqual((await t.a.get('/single-send/details', { utr })).body, Rnf);
    assert.deepEqual((await t.a.post('/single/send/bulk-delete', { strIds: [one] })).body, Rnf);
    const missing = await t.a.post('/single/send/bulk-delete', {});
    assert.equal(missing.status, 422);
    assert.deepEqual(missing.body, fieldErrors({ strIds: ['The str ids field is required.'] }));
  });

  test('sent_at of a completed send is UTC `YYYY-MM-DD HH:MM:SS`', async () => {
    const utr = await createSend(t.a, sendForm(base));
    await t.database.db.updateTable('single_sends').set({ status: 3, sent_at: '2030-01-15 10:00:00' }).where('utr', '=', utr).execute();
    assert.match((await details(t.a, utr)).sent_at, SQL_TS);
  });
});
