import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fieldErrors } from '../helpers.js';
import { senderForm } from './senders.helpers.js';
import {
  addSchedule,
  automationBase,
  automationDetails,
  automationForm,
  automationWithEmails,
  createAutomation,
  failedText,
  Rnf,
  scheduleForm,
  schedulesOf,
  setupAutomations,
  TS,
  UUID,
  type AutomationBase,
  type AutomationsContext,
} from './automations.helpers.js';

const NO_EMAIL = failedText('Add at least one email to live automation');

describe('automations: their emails (schedules)', () => {
  let t: AutomationsContext;
  let base: AutomationBase;
  let other: AutomationBase;
  before(async () => {
    t = await setupAutomations();
    base = await automationBase(t, t.a);
    other = await automationBase(t, t.b);
  });
  after(() => t.close());

  /** A new automation of A's with `n` emails (`Email 1`, …); returns its utr. */
  const withEmails = (n: number, extra: Record<string, unknown> = {}) => automationWithEmails(t.a, base, n, extra);

  test('schedule create: `Schedule Added` with the id and utr; the sender is copied into the email', async () => {
    const utr = await withEmails(0);
    const r = await t.a.post('/automations/schedule/create', scheduleForm(base, utr, { waiting_period: 2, waiting_type: 'days' }));
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.body), ['status', 'message', 'id', 'utr']);
    assert.equal(r.body.message, 'Schedule Added');
    assert.match(r.body.utr, UUID);
    const sender = (await t.a.get('/sender/details', { sender_id: base.sender })).body.message.sender;
    const [s] = await schedulesOf(t.a, utr);
    const automation = await automationDetails(t.a, utr);
    assert.deepEqual(
      { ...s, created_at: '', updated_at: '' },
      {
        id: r.body.id,
        user_id: t.a.keys!.user_id,
        automation_id: automation.id,
        sender_id: base.sender,
        from_sender: sender.from_email,
        reply_to: 'replies@example.com',
        sender_name: 'Acme News',
        sender_address: s.sender_address,
        subject: 'Welcome, ((first_name))',
        waiting_period: 2,
        waiting_type: 'days',
        utr: r.body.utr,
        template_id: 1,
        preview_img: 'blank.png',
        template_json: null,
        template_html: '<html><body><p>Hello ((first_name))</p></body></html>',
        track_clicks: 1,
        created_at: '',
        updated_at: '',
        design_url: `https://mail.example.test/designs/${r.body.utr}`,
        image: 'https://mail.example.test/images/templates/blank.png',
      },
    );
    assert.match(s.sender_address, /^1 Main Street, Floor 2, .+ 400001, India$/);
    assert.match(s.created_at, TS);
  });

  test('schedule create without any parameter names every required one', async () => {
    const r = await t.a.post('/automations/schedule/create', {});
    assert.equal(r.status, 422);
    assert.deepEqual(
      r.body,
      fieldErrors({
        utr: ['The utr field is required.'],
        sender_id: ['The sender id field is required.'],
        subject: ['The subject field is required.'],
        waiting_period: ['The waiting period field is required.'],
        waiting_type: ['The waiting type field is required.'],
        template_id: ['The template id field is required.'],
        preview_img: ['The preview img field is required.'],
      }),
    );
  });

  test("schedule create refuses an unverified or another account's sender, a bad subject, wait or design", async () => {
    const utr = await withEmails(0);
    const unverified = (await t.a.post('/sender/save', senderForm())).body.id;
    const cases: Array<[Record<string, unknown>, Record<string, string[]>]> = [
      [{ sender_id: unverified }, { sender_id: ['The selected sender id is not verified.'] }],
      [{ sender_id: other.sender }, { sender_id: ['The selected sender id is invalid.'] }],
      [{ sender_id: 'x' }, { sender_id: ['The sender id must be an integer.'] }],
      [{ subject: 'Hi\r\nBcc: x@example.com' }, { subject: ['The subject format is invalid.'] }],
      [{ waiting_type: 'weeks' }, { waiting_type: ['The selected waiting type is invalid.'] }],
      [{ waiting_period: -1 }, { waiting_period: ['The waiting period must be at least 0.'] }],
      [{ waiting_period: 'x' }, { waiting_period: ['The waiting period must be an integer.'] }],
      [{ waiting_period: 87_601 }, { waiting_period: ['The waiting period must not be greater than 87600.'] }],
      [{ template_id: 999 }, { template_id: ['The selected template id is invalid.'] }],
      [
        { template_json: '{"tagName":"mjml","children":[]}' },
        {
          template_json: ['The template json field prohibits template html from being present.'],
          template_html: ['The template html field prohibits template json from being present.'],
        },
      ],
    ];
    for (const [extra, errors] of cases) {
      const r = await t.a.post('/automations/schedule/create', scheduleForm(base, utr, extra));
      assert.equal(r.status, 422, JSON.stringify(extra));
      assert.deepEqual(r.body, fieldErrors(errors), JSON.stringify(extra));
    }
    const broken = await t.a.post(
      '/automations/schedule/create',
      scheduleForm(base, utr, { template_html: '', template_json: '{"tagName":"mjml"' }),
    );
    assert.equal(broken.status, 422);
    assert.deepEqual(Object.keys(broken.body.errors), ['template_json']);
    assert.deepEqual(await schedulesOf(t.a, utr), []);
  });

  test("schedule create: Record not found for an unknown, deleted or another account's automation", async () => {
    const bUtr = await createAutomation(t.b, automationForm(other));
    const gone = await withEmails(0);
    assert.equal((await t.a.delete('/automations/delete', { utr: gone })).status, 200);
    for (const utr of ['nope', bUtr, gone]) {
      const r = await t.a.post('/automations/schedule/create', scheduleForm(base, utr));
      assert.equal(r.status, 404, utr);
      assert.deepEqual(r.body, Rnf);
    }
    assert.deepEqual(await schedulesOf(t.b, bUtr), []);
  });

  test('emails can be added to a live and to a paused automation', async () => {
    const utr = await withEmails(1);
    assert.equal((await t.a.get('/automations/set-live', { utr })).status, 200);
    await addSchedule(t.a, scheduleForm(base, utr, { subject: 'While live' }));
    assert.equal((await t.a.get('/automations/pause', { utr })).status, 200);
    await addSchedule(t.a, scheduleForm(base, utr, { subject: 'While paused' }));
    assert.deepEqual(
      (await schedulesOf(t.a, utr)).map((s) => s.subject),
      ['Email 1', 'While live', 'While paused'],
    );
  });

  test("schedule list: in creation order; Record not found for a missing, unknown or another account's automation", async () => {
    const utr = await withEmails(3);
    const list = await schedulesOf(t.a, utr);
    assert.deepEqual(
      list.map((s) => s.subject),
      ['Email 1', 'Email 2', 'Email 3'],
    );
    assert.ok(list.every((s, i) => i === 0 || list[i - 1].id < s.id));
    assert.deepEqual(await schedulesOf(t.a, await withEmails(0)), []);
    const bUtr = await createAutomation(t.b, automationForm(other));
    for (const query of [{}, { utr: 'nope' }, { utr: bUtr }]) {
      const r = await t.a.get('/automations/schedule', query);
      assert.equal(r.status, 404);
      assert.deepEqual(r.body, Rnf);
    }
  });

  test('schedule delete: the email is gone (the others keep their order); a second delete is Record not found', async () => {
    const utr = await withEmails(3);
    const [first, second] = await schedulesOf(t.a, utr);
    const r = await t.a.delete('/automations/schedule/delete', { utr: second.utr });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { status: 'success', message: 'Deleted Successfully' });
    assert.deepEqual(
      (await schedulesOf(t.a, utr)).map((s) => s.subject),
      ['Email 1', 'Email 3'],
    );
    assert.deepEqual((await t.a.delete('/automations/schedule/delete', { utr: second.utr })).body, Rnf);
    assert.deepEqual((await t.a.delete('/automations/schedule/delete')).body, Rnf);
    // An email of a deleted automation is gone with it.
    assert.equal((await t.a.delete('/automations/delete', { utr })).status, 200);
    assert.deepEqual((await t.a.delete('/automations/schedule/delete', { utr: first.utr })).body, Rnf);
  });

  test("schedule delete: another account's email is Record not found and stays", async () => {
    const bUtr = await createAutomation(t.b, automationForm(other));
    const email = await addSchedule(t.b, scheduleForm(other, bUtr));
    const r = await t.a.delete('/automations/schedule/delete', { utr: email.utr });
    assert.equal(r.status, 404);
    assert.deepEqual(r.body, Rnf);
    assert.equal((await schedulesOf(t.b, bUtr)).length, 1);
  });

  test('an automation whose emails were all deleted cannot be set live again until one is added', async () => {
    const utr = await withEmails(1);
    const [only] = await schedulesOf(t.a, utr);
    assert.equal((await t.a.delete('/automations/schedule/delete', { utr: only.utr })).status, 200);
    assert.deepEqual((await t.a.get('/automations/set-live', { utr })).body, NO_EMAIL);
  });
});
