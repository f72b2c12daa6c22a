import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertNeedsKeys, fieldErrors } from '../helpers.js';
import { typeWith } from './single-sends.helpers.js';
import {
  addSchedule,
  automationBase,
  automationDetails,
  automationForm,
  automationWithEmails,
  automationRow,
  createAutomation,
  failedText,
  queuedEvents,
  RNF,
  Rnf,
  scheduleForm,
  schedulesOf,
  setupAutomations,
  SQL_TS,
  TS,
  UUID,
  type AutomationBase,
  type AutomationsContext,
} from './automations.helpers.js';

const NO_GROUP = failedText('Unsubscribe group require to live automation');
const NO_EMAIL = failedText('Add at least one email to live automation');

describe('automations: the API', () => {
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

  test('every route needs the key headers', async () => {
    await assertNeedsKeys(t.anon, [
      ['GET', '/automations'],
      ['POST', '/automations/create'],
      ['GET', '/automations/duplicate'],
      ['GET', '/automations/details'],
      ['GET', '/automations/pause'],
      ['GET', '/automations/set-live'],
      ['DELETE', '/automations/delete'],
      ['POST', '/automations/bulk-delete'],
      ['GET', '/automations/schedule'],
      ['POST', '/automations/schedule/create'],
      ['DELETE', '/automations/schedule/delete'],
    ]);
  });

  test('create answers the utr of a draft; details shows it with the group id as text', async () => {
    const r = await t.a.post('/automations/create', automationForm(base));
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.body), ['status', 'message']);
    assert.match(r.body.message.utr, UUID);
    const d = await t.a.get('/automations/details', { utr: r.body.message.utr });
    assert.equal(d.status, 200);
    const a = d.body.message.automation;
    assert.deepEqual(
      { ...a, id: 0, created_at: '', updated_at: '' },
      {
        id: 0,
        user_id: t.a.keys!.user_id,
        automation_for: base.type,
        automation_for_table: 'contacts',
        automation_name: 'Welcome series',
        exit_criteria: 0,
        unsubscribe_group_id: String(base.group),
        automation_type: 1,
        utr: r.body.message.utr,
        status: 0,
        live_at: null,
        total_triggered: 0,
        total_delivered: 0,
        total_unique_opens: 0,
        total_opens: 0,
        total_bounces: 0,
        total_unsubscribe: 0,
        deleted_at: null,
        created_at: '',
        updated_at: '',
      },
    );
    assert.equal(a.created_at, '2030-01-15T10:00:00.000000Z');
    assert.match(a.updated_at, TS);
  });

  test('create: custom type (2), a segment target and exit_criteria 1', async () => {
    const utr = await createAutomation(
      t.a,
      automationForm(base, { type: 'custom', automation_for: `segments_${base.segment}`, exit_criteria: 1 }),
    );
    const a = await automationDetails(t.a, utr);
    assert.deepEqual([a.automation_type, a.automation_for, a.automation_for_table, a.exit_criteria], [2, base.segment, 'segments', 1]);
  });

  test('create without any parameter names every required one', async () => {
    const r = await t.a.post('/automations/create', {});
    assert.equal(r.status, 422);
    assert.deepEqual(
      r.body,
      fieldErrors({
        type: ['The type field is required.'],
        automation_for: ['The automation for field is required.'],
        automation_name: ['The automation name field is required.'],
        unsubscribe_group_id: ['The unsubscribe group id field is required.'],
      }),
    );
  });

  test("create refuses a bad type, bad targets, another account's target and group, a bad exit_criteria", async () => {
    const { type: gone } = await typeWith(t.a, [['gone@example.com']]);
    assert.equal((await t.a.delete('/contacts-type/delete', { contact_type_id: gone })).status, 200);
    const invalidFor = { automation_for: ['The selected automation for is invalid.'] };
    const cases: Array<[Record<string, unknown>, Record<string, string[]>]> = [
      [{ type: 'weekly' }, { type: ['The selected type is invalid.'] }],
      [{ automation_for: 'people_1' }, invalidFor],
      [{ automation_for: 'contacts_x' }, invalidFor],
      [{ automation_for: `contacts_${base.type},segments_${base.segment}` }, invalidFor],
      [{ automation_for: `contacts_${other.type}` }, invalidFor],
      [{ automation_for: `segments_${other.segment}` }, invalidFor],
      [{ automation_for: 'segments_999999' }, invalidFor],
      [{ automation_for: `contacts_${gone}` }, invalidFor],
      [{ unsubscribe_group_id: other.group }, { unsubscribe_group_id: ['The selected unsubscribe group id is invalid.'] }],
      [{ unsubscribe_group_id: 'x' }, { unsubscribe_group_id: ['The unsubscribe group id must be an integer.'] }],
      [{ exit_criteria: 2 }, { exit_criteria: ['The selected exit criteria is invalid.'] }],
      [{ automation_name: 'x'.repeat(256) }, { automation_name: ['The automation name must not be greater than 255 characters.'] }],
    ];
    for (const [extra, errors] of cases) {
      const r = await t.a.post('/automations/create', automationForm(base, extra));
      assert.equal(r.status, 422, JSON.stringify(extra));
      assert.deepEqual(r.body, fieldErrors(errors), JSON.stringify(extra));
    }
  });

  test('list: newest first, each with its number of emails; pages with meta; only the account’s', async () => {
    const one = await withEmails(2, { automation_name: 'List one' });
    const two = await withEmails(0, { automation_name: 'List two' });
    const bUtr = await createAutomation(t.b, automationForm(other));
    const r = await t.a.get('/automations');
    assert.equal(r.status, 200);
    const list = r.body.message.automations as Array<Record<string, any>>;
    assert.deepEqual(Object.keys(r.body.message), ['automations']);
    assert.deepEqual(
      list.slice(0, 2).map((a) => [a.utr, a.automation_schedule_count]),
      [
        [two, 0],
        [one, 2],
      ],
    );
    assert.ok(list.every((a, i) => i === 0 || list[i - 1].id > a.id));
    assert.ok(!list.some((a) => a.utr === bUtr));
    const { automation_schedule_count, ...rest } = list[1];
    assert.equal(automation_schedule_count, 2);
    assert.deepEqual(rest, await automationDetails(t.a, one));
    const page = await t.a.get('/automations', { page: 1, per_page: 1 });
    assert.equal(page.status, 200);
    assert.deepEqual(
      page.body.message.automations.map((a: any) => a.utr),
      [two],
    );
    assert.deepEqual(page.body.message.meta, { page: 1, per_page: 1, total: list.length });
    assert.equal((await t.a.get('/automations', { per_page: 0 })).status, 422);
  });

  test("details: Record Not Found for a missing, unknown or another account's utr", async () => {
    const bUtr = await createAutomation(t.b, automationForm(other));
    for (const query of [{}, { utr: 'nope' }, { utr: bUtr }]) {
      const r = await t.a.get('/automations/details', query);
      assert.equal(r.status, 404);
      assert.deepEqual(r.body, RNF);
    }
  });

  test('duplicate: a draft copy with the emails (fresh utrs, same order), zero statistics, never live', async () => {
    const utr = await withEmails(2, { automation_name: 'Original' });
    assert.equal((await t.a.get('/automations/set-live', { utr })).status, 200);
    await t.database.db
      .updateTable('automations')
      .set({ total_triggered: 5, total_delivered: 4, total_opens: 3 })
      .where('utr', '=', utr)
      .execute();
    const r = await t.a.get('/automations/duplicate', { utr });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.body), ['status', 'message']);
    const copyUtr = r.body.message.utr;
    assert.match(copyUtr, UUID);
    const [orig, copy] = [await automationDetails(t.a, utr), await automationDetails(t.a, copyUtr)];
    assert.equal(copy.automation_name, 'Original (copy)');
    assert.deepEqual([copy.status, copy.live_at, copy.total_triggered, copy.total_delivered, copy.total_opens], [0, null, 0, 0, 0]);
    assert.deepEqual(
      [copy.automation_for, copy.automation_for_table, copy.automation_type, copy.exit_criteria, copy.unsubscribe_group_id],
      [orig.automation_for, orig.automation_for_table, orig.automation_type, orig.exit_criteria, orig.unsubscribe_group_id],
    );
    assert.equal(orig.status, 1);
    const [from, to] = [await schedulesOf(t.a, utr), await schedulesOf(t.a, copyUtr)];
    assert.deepEqual(
      to.map((s) => s.subject),
      ['Email 1', 'Email 2'],
    );
    const strip = (s: Record<string, any>) => ({ ...s, id: 0, automation_id: 0, utr: '', design_url: '', created_at: '', updated_at: '' });
    assert.deepEqual(to.map(strip), from.map(strip));
    assert.ok(to.every((s, i) => s.utr !== from[i].utr && s.automation_id === copy.id));
  });

  test("duplicate: Record not found for a missing, unknown, deleted or another account's utr", async () => {
    const bUtr = await createAutomation(t.b, automationForm(other));
    const gone = await withEmails(0);
    assert.equal((await t.a.delete('/automations/delete', { utr: gone })).status, 200);
    for (const query of [{}, { utr: 'nope' }, { utr: bUtr }, { utr: gone }]) {
      const r = await t.a.get('/automations/duplicate', query);
      assert.equal(r.status, 404);
      assert.deepEqual(r.body, Rnf);
    }
  });

  test('set live: needs an email; then live with live_at, a notification, and again succeeds without change', async () => {
    assert.equal((await t.a.post('/notification-recipient/save', { email_address: 'boss@example.com', email_owner: 'Boss' })).status, 200);
    const utr = await withEmails(0);
    const empty = await t.a.get('/automations/set-live', { utr });
    assert.equal(empty.status, 422);
    assert.deepEqual(empty.body, NO_EMAIL);
    assert.equal((await automationRow(t, utr)).status, 0);
    await addSchedule(t.a, scheduleForm(base, utr));
    const before = (await queuedEvents(t, t.a)).length;
    const r = await t.a.get('/automations/set-live', { utr });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, { status: 'success', message: 'Automation has been set live' });
    const live = await automationDetails(t.a, utr);
    assert.equal(live.status, 1);
    assert.equal(live.live_at, '2030-01-15 10:00:00');
    assert.match(live.live_at, SQL_TS);
    assert.deepEqual((await queuedEvents(t, t.a)).slice(before), ['automation.live']);
    t.clock.advance(3_600_000);
    const again = await t.a.get('/automations/set-live', { utr });
    assert.deepEqual(again.body, { status: 'success', message: 'Automation has been set live' });
    assert.deepEqual(await automationDetails(t.a, utr), live);
    assert.equal((await queuedEvents(t, t.a)).length, before + 1, 'no second note');
  });

  test('set live needs a live unsubscribe group and a live target', async () => {
    const ownGroup = (await t.a.post('/unsubscribes-groups/save', { group_name: 'Temp', description: 'x', is_display: 1 })).body.id;
    const utr = await withEmails(1, { unsubscribe_group_id: ownGroup });
    assert.equal((await t.a.delete('/unsubscribes-groups/delete', { id: ownGroup })).status, 200);
    const r = await t.a.get('/automations/set-live', { utr });
    assert.equal(r.status, 422);
    assert.deepEqual(r.body, NO_GROUP);
    await t.database.db.updateTable('automations').set({ unsubscribe_group_id: null }).where('utr', '=', utr).execute();
    assert.deepEqual((await t.a.get('/automations/set-live', { utr })).body, NO_GROUP);

    const { type } = await typeWith(t.a, [['target@example.com']]);
    const orphan = await withEmails(1, { automation_for: `contacts_${type}` });
    assert.equal((await t.a.delete('/contacts-type/delete', { contact_type_id: type })).status, 200);
    const gone = await t.a.get('/automations/set-live', { utr: orphan });
    assert.equal(gone.status, 422);
    assert.deepEqual(gone.body, failedText('The contact type or segment of the automation no longer exists'));
    assert.equal((await automationRow(t, orphan)).status, 0);
  });

  test("set live: Record not found for a missing, unknown, deleted or another account's utr", async () => {
    const bUtr = await createAutomation(t.b, automationForm(other));
    await addSchedule(t.b, scheduleForm(other, bUtr));
    const gone = await withEmails(1);
    assert.equal((await t.a.delete('/automations/delete', { utr: gone })).status, 200);
    for (const query of [{}, { utr: 'nope' }, { utr: bUtr }, { utr: gone }]) {
      const r = await t.a.get('/automations/set-live', query);
      assert.equal(r.status, 404);
      assert.deepEqual(r.body, Rnf);
    }
    assert.equal((await automationRow(t, bUtr)).status, 0);
    // A value that cannot be a utr at all is a field error, as on every route.
    const long = await t.a.get('/automations/set-live', { utr: 'x'.repeat(65) });
    assert.equal(long.status, 422);
    assert.deepEqual(long.body, fieldErrors({ utr: ['The utr must not be greater than 64 characters.'] }));
  });

  test('pause: only a live automation; status 0 with live_at kept, a notification; set live again keeps live_at', async () => {
    const utr = await withEmails(1);
    const draft = await t.a.get('/automations/pause', { utr });
    assert.equal(draft.status, 404);
    assert.deepEqual(draft.body, Rnf);
    assert.equal((await t.a.get('/automations/set-live', { utr })).status, 200);
    const liveAt = (await automationDetails(t.a, utr)).live_at;
    const before = (await queuedEvents(t, t.a)).length;
    t.clock.advance(60_000);
    const r = await t.a.get('/automations/pause', { utr });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, { status: 'success', message: 'Automation Paused Successfully' });
    const paused = await automationDetails(t.a, utr);
    assert.deepEqual([paused.status, paused.live_at], [0, liveAt]);
    assert.deepEqual((await queuedEvents(t, t.a)).slice(before), ['automation.paused']);
    assert.deepEqual((await t.a.get('/automations/pause', { utr })).body, Rnf, 'a paused one cannot be paused again');
    t.clock.advance(60_000);
    assert.equal((await t.a.get('/automations/set-live', { utr })).status, 200);
    const again = await automationDetails(t.a, utr);
    assert.deepEqual([again.status, again.live_at], [1, liveAt]);
  });

  test("pause: Record not found for a missing, unknown or another account's utr", async () => {
    const bUtr = await createAutomation(t.b, automationForm(other));
    await addSchedule(t.b, scheduleForm(other, bUtr));
    assert.equal((await t.b.get('/automations/set-live', { utr: bUtr })).status, 200);
    for (const query of [{}, { utr: 'nope' }, { utr: bUtr }]) {
      const r = await t.a.get('/automations/pause', query);
      assert.equal(r.status, 404);
      assert.deepEqual(r.body, Rnf);
    }
    assert.equal((await automationRow(t, bUtr)).status, 1);
  });

  test('delete: soft delete; the automation leaves list and details; a second delete is Record not found', async () => {
    const utr = await withEmails(1);
    assert.equal((await t.a.get('/automations/set-live', { utr })).status, 200);
    const r = await t.a.delete('/automations/delete', { utr });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { status: 'success', message: 'Deleted Successfully' });
    assert.match((await automationRow(t, utr)).deleted_at!, TS);
    assert.deepEqual((await t.a.get('/automations/details', { utr })).body, RNF);
    assert.ok(!(await t.a.get('/automations')).body.message.automations.some((a: any) => a.utr === utr));
    assert.deepEqual((await t.a.get('/automations/schedule', { utr })).body, Rnf);
    assert.deepEqual((await t.a.delete('/automations/delete', { utr })).body, Rnf);
    assert.deepEqual((await t.a.delete('/automations/delete')).body, Rnf);
  });

  test("delete and bulk delete leave another account's automation alone", async () => {
    const bUtr = await createAutomation(t.b, automationForm(other));
    const r = await t.a.delete('/automations/delete', { utr: bUtr });
    assert.equal(r.status, 404);
    assert.deepEqual(r.body, Rnf);
    assert.deepEqual((await t.a.post('/automations/bulk-delete', { strIds: [bUtr] })).body, Rnf);
    assert.equal((await automationRow(t, bUtr)).deleted_at, null);
  });

  test('bulk delete: utrs, unknown ones ignored; Record not found when none was deleted; strIds required', async () => {
    const one = await withEmails(0);
    const two = await withEmails(1);
    const r = await t.a.post('/automations/bulk-delete', { strIds: [one, two, 'unknown'] });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, { status: 'success', message: 'Deleted Successfully' });
    const listed = (await t.a.get('/automations')).body.message.automations.map((a: any) => a.utr);
    assert.ok(!listed.includes(one) && !listed.includes(two));
    assert.deepEqual((await t.a.post('/automations/bulk-delete', { strIds: [one, 'unknown'] })).body, Rnf);
    const missing = await t.a.post('/automations/bulk-delete', {});
    assert.equal(missing.status, 422);
    assert.deepEqual(missing.body, fieldErrors({ strIds: ['The str ids field is required.'] }));
  });
});
