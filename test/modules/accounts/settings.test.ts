import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertNeedsKeys, fieldErrors } from '../../helpers.js';
import { setupSends, type SendsContext } from '../single-sends.helpers.js';

const DEFAULTS = { sunset_enabled: 0, sunset_days: 180, sunset_min_messages: 5, require_two_factor: 0 };

describe('account settings', () => {
  let t: SendsContext;

  before(async () => {
    t = await setupSends();
  });
  after(() => t.close());

  it('needs the keys', async () => {
    await assertNeedsKeys(t.anon, [
      ['GET', '/account/settings'],
      ['POST', '/account/settings/update'],
      ['GET', '/account/sunset-preview'],
    ]);
  });

  it('answers the defaults until saved', async () => {
    const r = await t.a.get('/account/settings');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { status: 'success', message: { settings: DEFAULTS } });
  });

  it('saves the settings given and keeps the others, for its own account only', async () => {
    let r = await t.a.post('/account/settings/update', { sunset_days: 365 });
    assert.deepEqual(r.body, { status: 'success', message: 'Updated Successfully' });
    assert.deepEqual((await t.a.get('/account/settings')).body.message.settings, { ...DEFAULTS, sunset_days: 365 });
    r = await t.a.request('POST', '/account/settings/update', { json: { sunset_enabled: 1, sunset_min_messages: 12 } });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual((await t.a.get('/account/settings')).body.message.settings, {
      sunset_enabled: 1,
      sunset_days: 365,
      sunset_min_messages: 12,
      require_two_factor: 0,
    });
    assert.deepEqual((await t.b.get('/account/settings')).body.message.settings, DEFAULTS);
    r = await t.a.post('/account/settings/update', { sunset_enabled: 0, sunset_days: 30, sunset_min_messages: 1 });
    assert.equal(r.status, 200);
    assert.deepEqual((await t.a.get('/account/settings')).body.message.settings, {
      sunset_enabled: 0,
      sunset_days: 30,
      sunset_min_messages: 1,
      require_two_factor: 0,
    });
    r = await t.a.post('/account/settings/update', { sunset_days: 1095, sunset_min_messages: 100 });
    assert.equal(r.status, 200);
  });

  it('rejects values out of their ranges, every field together, and changes nothing', async () => {
    const before = (await t.a.get('/account/settings')).body.message.settings;
    let r = await t.a.post('/account/settings/update', { sunset_enabled: 2, sunset_days: 29, sunset_min_messages: 0 });
    assert.equal(r.status, 422);
    assert.deepEqual(
      r.body,
      fieldErrors({
        sunset_enabled: ['The sunset enabled must not be greater than 1.'],
        sunset_days: ['The sunset days must be at least 30.'],
        sunset_min_messages: ['The sunset min messages must be at least 1.'],
      }),
    );
    r = await t.a.post('/account/settings/update', { sunset_days: 1096, sunset_min_messages: 101 });
    assert.deepEqual(
      r.body,
      fieldErrors({
        sunset_days: ['The sunset days must not be greater than 1095.'],
        sunset_min_messages: ['The sunset min messages must not be greater than 100.'],
      }),
    );
    r = await t.a.post('/account/settings/update', { sunset_enabled: 'yes', sunset_days: '7.5' });
    assert.deepEqual(
      r.body,
      fieldErrors({
        sunset_enabled: ['The sunset enabled must be an integer.'],
        sunset_days: ['The sunset days must be an integer.'],
      }),
    );
    assert.deepEqual((await t.a.get('/account/settings')).body.message.settings, before);
  });

  it('previews with the query values or the saved ones, and rejects values out of range', async () => {
    let r = await t.a.get('/account/sunset-preview');
    assert.deepEqual(r.body, { status: 'success', message: { count: 0, sample: [] } });
    r = await t.a.get('/account/sunset-preview', { sunset_days: 90, sunset_min_messages: 3 });
    assert.deepEqual(r.body, { status: 'success', message: { count: 0, sample: [] } });
    r = await t.a.get('/account/sunset-preview', { sunset_days: 29, sunset_min_messages: 101 });
    assert.equal(r.status, 422);
    assert.deepEqual(
      r.body,
      fieldErrors({
        sunset_days: ['The sunset days must be at least 30.'],
        sunset_min_messages: ['The sunset min messages must not be greater than 100.'],
      }),
    );
    r = await t.a.get('/account/sunset-preview', { sunset_days: 'many' });
    assert.deepEqual(r.body, fieldErrors({ sunset_days: ['The sunset days must be an integer.'] }));
  });

  it('is in the OpenAPI document', async () => {
    const doc = (await t.anon.get('/openapi.json')).body;
    assert.ok(doc.paths['/account/settings'].get);
    assert.ok(doc.paths['/account/settings/update'].post);
    assert.ok(doc.paths['/account/sunset-preview'].get);
  });
});
