/**
 * `POST /automations/update`: an automation's name, target, group and exit rule, with create's
 * rules; a live automation keeps its target (409); a paused one enrols its new target's members.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertNeedsKeys, fieldErrors } from '../helpers.js';
import { typeWith } from './single-sends.helpers.js';
import {
  automationBase,
  automationDetails,
  automationForm,
  automationWithEmails,
  createAutomation,
  failedText,
  Rnf,
  setupAutomations,
  TS,
  type AutomationBase,
  type AutomationsContext,
} from './automations.helpers.js';

const UPDATED = { status: 'success', message: 'Updated Successfully' };
const LIVE_TARGET = failedText('A live automation cannot change its contact type or segment: pause it first');

describe('automations: update', () => {
  let t: AutomationsContext;
  let base: AutomationBase;
  let other: AutomationBase;
  before(async () => {
    t = await setupAutomations();
    base = await automationBase(t, t.a);
    other = await automationBase(t, t.b);
  });
  after(() => t.close());

  /** A valid update of `utr` to the base's contact type, over `extra`. */
  const updateForm = (utr: string, extra: Record<string, unknown> = {}) => ({
    utr,
    automation_for: `contacts_${base.type}`,
    automation_name: 'Renamed',
    unsubscribe_group_id: base.group,
    ...extra,
  });

  /** The enrollments of an automation, as `[email, state]`, by address. */
  async function enrollments(utr: string): Promise<Array<[string, string]>> {
    const rows = await t.database.db
      .selectFrom('automation_enrollments as e')
      .innerJoin('automations as a', 'a.id', 'e.automation_id')
      .select(['e.email', 'e.state'])
      .where('a.utr', '=', utr)
      .orderBy('e.email')
      .execute();
    return rows.map((r) => [r.email, r.state]);
  }

  test('needs the key headers', async () => {
    await assertNeedsKeys(t.anon, [['POST', '/automations/update']]);
  });

  test('changes the name, target, group and exit rule; status, type, live_at and statistics stay', async () => {
    const utr = await automationWithEmails(t.a, base, 1, { automation_name: 'Before', type: 'custom' });
    const before = await automationDetails(t.a, utr);
    const group2 = (await t.a.post('/unsubscribes-groups/save', { group_name: 'Other', description: 'x', is_display: 1 })).body.id;
    t.clock.advance(60_000);
    const r = await t.a.post(
      '/automations/update',
      updateForm(utr, { automation_for: `segments_${base.segment}`, unsubscribe_group_id: group2, exit_criteria: 1 }),
    );
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, UPDATED);
    const after = await automationDetails(t.a, utr);
    assert.deepEqual(
      [after.automation_name, after.automation_for, after.automation_for_table, after.unsubscribe_group_id, after.exit_criteria],
      ['Renamed', base.segment, 'segments', String(group2), 1],
    );
    assert.match(after.updated_at, TS);
    assert.notEqual(after.updated_at, before.updated_at);
    const same = (a: Record<string, unknown>) => [a.id, a.utr, a.status, a.automation_type, a.live_at, a.total_triggered, a.created_at];
    assert.deepEqual(same(after), same(before));
  });

  test('exit_criteria left out stays as it was', async () => {
    const utr = await createAutomation(t.a, automationForm(base, { exit_criteria: 1 }));
    assert.deepEqual((await t.a.post('/automations/update', updateForm(utr))).body, UPDATED);
    const a = await automationDetails(t.a, utr);
    assert.deepEqual([a.automation_name, a.exit_criteria], ['Renamed', 1]);
    assert.deepEqual((await t.a.post('/automations/update', updateForm(utr, { exit_criteria: 0 }))).body, UPDATED);
    assert.equal((await automationDetails(t.a, utr)).exit_criteria, 0);
  });

  test('without any parameter names every required one', async () => {
    const r = await t.a.post('/automations/update', {});
    assert.equal(r.status, 422);
    assert.deepEqual(
      r.body,
      fieldErrors({
        utr: ['The utr field is required.'],
        automation_for: ['The automation for field is required.'],
        automation_name: ['The automation name field is required.'],
        unsubscribe_group_id: ['The unsubscribe group id field is required.'],
      }),
    );
  });

  test("refuses bad targets, another account's target and group, a bad exit_criteria, a long name, blanks: create's messages", async () => {
    const utr = await createAutomation(t.a, automationForm(base, { automation_name: 'Kept' }));
    const { type: gone } = await typeWith(t.a, [['gone.update@example.com']]);
    assert.equal((await t.a.delete('/contacts-type/delete', { contact_type_id: gone })).status, 200);
    const invalidFor = { automation_for: ['The selected automation for is invalid.'] };
    const cases: Array<[Record<string, unknown>, Record<string, string[]>]> = [
      [{ automation_for: 'people_1' }, invalidFor],
      [{ automation_for: 'contacts_x' }, invalidFor],
      [{ automation_for: `contacts_${base.type},segments_${base.segment}` }, invalidFor],
      [{ automation_for: `contacts_${other.type}` }, invalidFor],
      [{ automation_for: `segments_${other.segment}` }, invalidFor],
      [{ automation_for: 'segments_999999' }, invalidFor],
      [{ automation_for: `contacts_${gone}` }, invalidFor],
      [{ automation_for: 'x'.repeat(65) }, { automation_for: ['The automation for must not be greater than 64 characters.'] }],
      [{ automation_for: '' }, { automation_for: ['The automation for field is required.'] }],
      [{ unsubscribe_group_id: other.group }, { unsubscribe_group_id: ['The selected unsubscribe group id is invalid.'] }],
      [{ unsubscribe_group_id: 'x' }, { unsubscribe_group_id: ['The unsubscribe group id must be an integer.'] }],
      [{ exit_criteria: 2 }, { exit_criteria: ['The selected exit criteria is invalid.'] }],
      [{ automation_name: 'x'.repeat(256) }, { automation_name: ['The automation name must not be greater than 255 characters.'] }],
      [{ automation_name: '  ' }, { automation_name: ['The automation name field is required.'] }],
      [
        { automation_for: 'nope', unsubscribe_group_id: 0, automation_name: '' },
        {
          automation_name: ['The automation name field is required.'],
          unsubscribe_group_id: ['The unsubscribe group id must be at least 1.'],
          automation_for: ['The selected automation for is invalid.'],
        },
      ],
    ];
    for (const [extra, errors] of cases) {
      const r = await t.a.post('/automations/update', updateForm(utr, extra));
      assert.equal(r.status, 422, JSON.stringify(extra));
      assert.deepEqual(r.body, fieldErrors(errors), JSON.stringify(extra));
    }
    assert.equal((await automationDetails(t.a, utr)).automation_name, 'Kept', 'nothing changed');
  });

  test("Record not found for an unknown, deleted or another account's utr (before the fields are checked)", async () => {
    const bUtr = await createAutomation(t.b, automationForm(other, { automation_name: 'B keeps' }));
    const gone = await createAutomation(t.a, automationForm(base));
    assert.equal((await t.a.delete('/automations/delete', { utr: gone })).status, 200);
    for (const utr of ['nope', bUtr, gone]) {
      for (const form of [updateForm(utr), { utr, automation_name: 'x'.repeat(300) }]) {
        const r = await t.a.post('/automations/update', form);
        assert.equal(r.status, 404, utr);
        assert.deepEqual(r.body, Rnf);
      }
    }
    assert.equal((await automationDetails(t.b, bUtr)).automation_name, 'B keeps');
    const long = await t.a.post('/automations/update', updateForm('x'.repeat(65)));
    assert.equal(long.status, 422);
    assert.deepEqual(long.body, fieldErrors({ utr: ['The utr must not be greater than 64 characters.'] }));
  });

  test('a live automation keeps its target (409) but can change its name, group and exit rule', async () => {
    const utr = await automationWithEmails(t.a, base, 1);
    assert.equal((await t.a.get('/automations/set-live', { utr })).status, 200);
    const moved = await t.a.post('/automations/update', updateForm(utr, { automation_for: `segments_${base.segment}` }));
    assert.equal(moved.status, 409);
    assert.deepEqual(moved.body, LIVE_TARGET);
    const kept = await automationDetails(t.a, utr);
    assert.deepEqual([kept.automation_for_table, kept.automation_name, kept.status], ['contacts', 'Welcome series', 1]);
    assert.deepEqual((await t.a.post('/automations/update', updateForm(utr, { exit_criteria: 1 }))).body, UPDATED);
    const renamed = await automationDetails(t.a, utr);
    assert.deepEqual([renamed.automation_name, renamed.exit_criteria, renamed.status], ['Renamed', 1, 1]);
  });

  test('a draft changes its target without enrolling anyone', async () => {
    const utr = await automationWithEmails(t.a, base, 1, { type: 'custom' });
    const { type } = await typeWith(t.a, [['draft.target@example.com']]);
    assert.deepEqual((await t.a.post('/automations/update', updateForm(utr, { automation_for: `contacts_${type}` }))).body, UPDATED);
    assert.equal((await automationDetails(t.a, utr)).automation_for, type);
    assert.deepEqual(await enrollments(utr), []);
  });

  test("a paused automation changes its target and enrols the new target's members: custom to run, welcome as already there", async () => {
    const { type } = await typeWith(t.a, [['new.one@example.com'], ['new.two@example.com']]);
    for (const [kind, state] of [
      ['custom', 'active'],
      ['welcome', 'exited'],
    ] as const) {
      const utr = await automationWithEmails(t.a, base, 1, { type: kind });
      assert.equal((await t.a.get('/automations/set-live', { utr })).status, 200);
      assert.equal((await t.a.get('/automations/pause', { utr })).status, 200);
      const old = await enrollments(utr);
      const r = await t.a.post('/automations/update', updateForm(utr, { automation_for: `contacts_${type}` }));
      assert.equal(r.status, 200, r.text);
      const a = await automationDetails(t.a, utr);
      assert.deepEqual([a.automation_for, a.automation_for_table, a.status], [type, 'contacts', 0]);
      assert.deepEqual(
        await enrollments(utr),
        [...old, ['new.one@example.com', state] as [string, string], ['new.two@example.com', state] as [string, string]].sort((x, y) =>
          x[0].localeCompare(y[0]),
        ),
        kind,
      );
      assert.equal((await t.a.get('/automations/set-live', { utr })).status, 200, 'it goes live again on its new target');
    }
  });
});
