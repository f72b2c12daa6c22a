import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { drainQueue, fieldErrors } from '../helpers.js';
import { abForm, audience } from './single-sends-ab.helpers.js';
import { createSend, details, group, Rnf, sendRow, setupSends, verifiedSender, type SendsContext } from './single-sends.helpers.js';

const MJML = JSON.stringify({
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
          children: [{ tagName: 'mj-column', attributes: {}, children: [{ tagName: 'mj-text', attributes: {}, content: 'Saved' }] }],
        },
      ],
    },
  ],
});

describe('single sends: A/B tests through the API (parameters, details, the manual pick)', () => {
  let t: SendsContext;
  let base: { sender: number; group: number; type: number };
  let designId: number;

  before(async () => {
    t = await setupSends({ sink: true });
    const { type } = await audience(t, 'api', 6);
    base = { sender: await verifiedSender(t, t.a), group: await group(t.a), type };
    const d = await t.a.post('/designs/create', { name: 'Saved', template_json: MJML });
    assert.equal(d.status, 200, d.text);
    designId = d.body.id;
  });
  after(() => t.close());

  const create = (form: Record<string, unknown>) => t.a.post('/single/send/create', form);

  test('with ab_test 1, the share, metric, wait and variants are required', async () => {
    const r = await create(abForm(base, [], { ab_test_percent: undefined, ab_winner_metric: undefined, ab_wait_minutes: undefined }));
    assert.equal(r.status, 422);
    assert.deepEqual(
      r.body,
      fieldErrors({
        ab_test_percent: ['The ab test percent field is required when ab test is 1.'],
        ab_winner_metric: ['The ab winner metric field is required when ab test is 1.'],
        ab_wait_minutes: ['The ab wait minutes field is required when ab test is 1.'],
        variants: ['The variants field is required when ab test is 1.'],
      }),
    );
  });

  test('bounds and choices, each field with its message, all together', async () => {
    const r = await create(
      abForm(base, ['B', 'C', 'D', 'E', 'F'], { ab_test_percent: 5, ab_winner_metric: 'views', ab_wait_minutes: 4321, ab_test: 2 }),
    );
    assert.equal(r.status, 422);
    assert.deepEqual(
      r.body,
      fieldErrors({
        ab_test: ['The selected ab test is invalid.'],
        variants: ['The variants must not have more than 4 items.'],
        ab_test_percent: ['The ab test percent must be at least 10.'],
        ab_winner_metric: ['The selected ab winner metric is invalid.'],
        ab_wait_minutes: ['The ab wait minutes must not be greater than 4320.'],
      }),
    );
    const low = await create(abForm(base, ['B'], { ab_test_percent: 51, ab_wait_minutes: 0, ab_winner_metric: 'clicks', track_clicks: 0 }));
    assert.deepEqual(
      low.body,
      fieldErrors({
        ab_test_percent: ['The ab test percent must not be greater than 50.'],
        ab_wait_minutes: ['The ab wait minutes must be at least 1.'],
        ab_winner_metric: ['The selected ab winner metric is invalid.'],
      }),
    );
    // A lone value is read as a list of one (as `strIds=5` is), whose entry is not a variant.
    const text = await create(abForm(base, ['B'], { ab_test_percent: 'ten', variants: 'B' }));
    assert.deepEqual(
      text.body,
      fieldErrors({ 'variants.1': ['The variants.1 must be an array.'], ab_test_percent: ['The ab test percent must be an integer.'] }),
    );
  });

  test("each variant's fields are named as sent (variants.1 is the first), with the design rules of the send", async () => {
    const other = await t.b.post('/designs/create', { name: 'Theirs', template_json: MJML });
    const r = await create(
      abForm(base, [], {
        variants: [
          { template_html: '<p>B</p>' },
          { subject: 'C\r\nBcc: x@example.com', template_id: 999 },
          { subject: 'D', template_html: '<p>D</p>', template_json: MJML },
          { subject: 'E', design_id: other.body.id },
        ],
      }),
    );
    assert.equal(r.status, 422);
    assert.deepEqual(
      r.body,
      fieldErrors({
        'variants.1.subject': ['The variants.1.subject field is required.'],
        'variants.2.subject': ['The variants.2.subject format is invalid.'],
      }),
    );
    const designs = await create(
      abForm(base, [], {
        variants: [
          { subject: 'C', template_id: 999 },
          { subject: 'D', template_html: '<p>D</p>', template_json: MJML },
          { subject: 'E', design_id: other.body.id },
          { subject: 'F', design_id: designId, template_html: '<p>F</p>' },
        ],
      }),
    );
    assert.deepEqual(
      designs.body,
      fieldErrors({
        'variants.1.template_id': ['The selected variants.1.template id is invalid.'],
        'variants.2.template_json': ['The variants.2.template json field prohibits variants.2.template html from being present.'],
        'variants.2.template_html': ['The variants.2.template html field prohibits variants.2.template json from being present.'],
        'variants.3.design_id': ['The selected variants.3.design id is invalid.'],
        'variants.4.design_id': ['The variants.4.design id field prohibits variants.4.template html from being present.'],
      }),
    );
    const json = await t.a.request('POST', '/single/send/create', {
      json: abForm(base, [], { variants: [{ subject: 'B', template_json: '{"tagName":"mjml"' }] }),
    });
    assert.equal(json.status, 422);
    assert.deepEqual(Object.keys(json.body.errors), ['variants.1.template_json']);
    assert.match(json.body.errors['variants.1.template_json'][0], /^The variants\.1\.template json /);
  });

  test("details show the test: variant 0 is the send, a variant without a design has the send's; duplicate copies it", async () => {
    const utr = await createSend(
      t.a,
      abForm(base, [], {
        schedule_type: 1,
        schedule_date: '2031-01-01',
        schedule_time: '10:00',
        ab_test_percent: 20,
        ab_winner_metric: 'clicks',
        ab_wait_minutes: 90,
        variants: [
          { subject: 'Subject B' },
          { subject: 'Subject C', template_html: '<p>C</p>' },
          { subject: 'Subject D', design_id: designId },
        ],
      }),
    );
    const d = await details(t.a, utr);
    const own = {
      template_id: 1,
      template_json: null,
      template_html: '<html><body><p>Hello ((first_name))</p></body></html>',
      design_id: null,
    };
    const none = { template_id: null, template_json: null, template_html: null, design_id: null };
    const expected = {
      ab_test: 1,
      ab_test_percent: 20,
      ab_winner_metric: 'clicks',
      ab_wait_minutes: 90,
      ab_wait_ends_at: null,
      variants: [
        { index: 0, subject: 'Subject A', ...own },
        { index: 1, subject: 'Subject B', ...none },
        { index: 2, subject: 'Subject C', ...none, template_id: 1, template_html: '<p>C</p>' },
        { index: 3, subject: 'Subject D', ...none, template_id: 1, template_json: MJML, design_id: designId },
      ],
      ab_winner: null,
    };
    const pick = (s: Record<string, any>) => Object.fromEntries(Object.keys(expected).map((k) => [k, s[k]]));
    assert.deepEqual(pick(d), expected);
    const listed = (await t.a.get('/single-send/list')).body.message.singleSends.find((s: { utr: string }) => s.utr === utr);
    assert.deepEqual(pick(listed), expected);

    const copy = await t.a.get('/single/send/duplicate', { utr });
    assert.equal(copy.status, 200, copy.text);
    assert.deepEqual(pick(await details(t.a, copy.body.utr)), expected);

    // An update takes every parameter again: without ab_test the send has no test any more.
    const up = await t.a.post('/single/send/update', { ...abForm(base, []), ab_test: 0, utr });
    assert.equal(up.status, 200, up.text);
    const plain = await details(t.a, utr);
    assert.deepEqual(pick(plain), {
      ...expected,
      ab_test: 0,
      ab_test_percent: null,
      ab_winner_metric: null,
      ab_wait_minutes: null,
      variants: [],
    });
    assert.deepEqual(pick(await details(t.a, copy.body.utr)), expected, 'the copy keeps its own variants');
  });

  test('the manual pick: 404 for another account, 409 without a test or before the start, 422 for a variant it lacks, 409 once chosen', async () => {
    const pick = (utr: unknown, variant: unknown, c = t.a) => c.post('/single/send/ab-winner', { utr, variant });
    const plainUtr = await createSend(t.a, { ...abForm(base, []), ab_test: 0 });
    const utr = await createSend(
      t.a,
      abForm(base, ['Subject B'], { schedule_type: 1, schedule_date: '2031-01-01', schedule_time: '10:00' }),
    );

    assert.deepEqual((await pick(utr, 1, t.b)).body, Rnf);
    assert.equal((await pick(utr, 1, t.b)).status, 404);
    assert.deepEqual((await pick('00000000-0000-4000-8000-000000000000', 1)).body, Rnf);
    const missing = await t.a.post('/single/send/ab-winner', {});
    assert.deepEqual(missing.body, fieldErrors({ utr: ['The utr field is required.'], variant: ['The variant field is required.'] }));
    assert.deepEqual((await pick(utr, 'x')).body, fieldErrors({ variant: ['The variant must be an integer.'] }));
    assert.deepEqual((await pick(utr, 5)).body, fieldErrors({ variant: ['The variant must not be greater than 4.'] }));

    const plain = await pick(plainUtr, 0);
    assert.deepEqual([plain.status, plain.body], [409, { status: 'failed', errors: 'The single send is not an A/B test.' }]);
    assert.deepEqual((await pick(utr, 2)).body, fieldErrors({ variant: ['The selected variant is invalid.'] }));
    const early = await pick(utr, 1);
    assert.deepEqual(
      [early.status, early.body.errors],
      [409, 'The A/B test has not started yet: its winner can be picked once the send is running, until one is chosen.'],
    );

    t.clock.set('2031-01-01T10:00:00.000Z');
    await drainQueue(t);
    assert.equal((await sendRow(t, utr)).status, 2);
    const ok = await pick(utr, 1);
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body, { status: 'success', message: { utr, ab_winner: 1, queued: 3 } });
    const again = await pick(utr, 0);
    assert.deepEqual([again.status, again.body.errors], [409, 'The winner of the A/B test was already chosen: variant 1.']);
    await drainQueue(t);
    const row = await sendRow(t, utr);
    assert.deepEqual([row.status, row.ab_winner, row.triggered], [3, 1, 6]);
    const done = await pick(utr, 1);
    assert.deepEqual([done.status, done.body.errors], [409, 'The winner of the A/B test was already chosen: variant 1.']);
  });
});
