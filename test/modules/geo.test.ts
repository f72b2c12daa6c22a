import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { setup, type TestContext, assertNeedsKeys } from '../helpers.js';

const PATH = '/get/country-state-city';

describe('country, state, city lookup', () => {
  let t: TestContext;
  let keys: Record<string, string>;
  before(async () => {
    t = await setup();
    keys = { publickey: t.a.keys!.public_key, secretkey: t.a.keys!.secret_key };
  });
  after(() => t.close());

  const raw = (query = '', headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'GET', url: PATH + query, headers: { ...keys, ...headers } });

  it('returns every country, state and city with exactly the documented element fields', async () => {
    const r = await t.a.get(PATH);
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(r.body.status, 'success');
    const { countries, states, cities } = r.body.message;
    assert.deepEqual(Object.keys(r.body.message), ['countries', 'states', 'cities']);
    assert.ok(countries.length > 240, `countries: ${countries.length}`);
    assert.ok(states.length > 4000, `states: ${states.length}`);
    assert.ok(cities.length > 100_000, `cities: ${cities.length}`);
    assert.ok(countries.every((c: object) => Object.keys(c).join() === 'id,name,iso2,phonecode'));
    assert.ok(states.every((s: object) => Object.keys(s).join() === 'id,name,country_id,iso2'));
    assert.ok(cities.every((c: object) => Object.keys(c).join() === 'id,name,state_id,country_id'));
    assert.ok(countries.every((c: { id: unknown }) => Number.isInteger(c.id)));
    assert.ok(
      cities.every(
        (c: { id: unknown; state_id: unknown; country_id: unknown }) =>
          Number.isInteger(c.id) && Number.isInteger(c.state_id) && Number.isInteger(c.country_id),
      ),
    );
    const india = countries.find((c: { id: number }) => c.id === 101);
    assert.deepEqual(india, { id: 101, name: 'India', iso2: 'IN', phonecode: '91' });
    const stateIds = new Set(states.map((s: { id: number }) => s.id));
    assert.ok(cities.slice(0, 1000).every((c: { state_id: number }) => stateIds.has(c.state_id)));
  });

  it('narrows states and cities by country_id, keeping every country', async () => {
    const r = await t.a.get(PATH, { country_id: 101 });
    const { countries, states, cities } = r.body.message;
    assert.ok(countries.length > 240);
    assert.ok(states.length > 20);
    assert.ok(states.every((s: { country_id: number }) => s.country_id === 101));
    assert.ok(cities.length > 1000);
    assert.ok(cities.every((c: { country_id: number }) => c.country_id === 101));
  });

  it('narrows cities by state_id', async () => {
    const states = (await t.a.get(PATH, { country_id: 101 })).body.message.states;
    const maharashtra = states.find((s: { name: string }) => s.name === 'Maharashtra');
    assert.ok(maharashtra);
    const r = await t.a.get(PATH, { country_id: 101, state_id: maharashtra.id });
    assert.ok(r.body.message.cities.length > 10);
    assert.ok(r.body.message.cities.every((c: { state_id: number }) => c.state_id === maharashtra.id));
    assert.ok(r.body.message.cities.some((c: { name: string }) => c.name === 'Pune'));
    const onlyState = await t.a.get(PATH, { state_id: maharashtra.id });
    assert.deepEqual(onlyState.body.message.cities, r.body.message.cities);
  });

  it('answers an unknown country with empty states and cities, and a malformed one with 422', async () => {
    const r = await t.a.get(PATH, { country_id: 999999 });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.message.states, []);
    assert.deepEqual(r.body.message.cities, []);
    const bad = await t.a.get(PATH, { country_id: 'India' });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body, { status: 'failed', errors: { country_id: ['The country id must be an integer.'] } });
  });

  it('sends ETag and Cache-Control, and 304 for a matching If-None-Match', async () => {
    const r = await raw();
    const etag = r.headers.etag as string;
    assert.match(etag, /^W\/"[A-Za-z0-9+/=]+"$/);
    assert.match(String(r.headers['cache-control']), /max-age=\d+/);
    assert.match(String(r.headers.vary), /Accept-Encoding/);
    for (const inm of [etag, etag.slice(2)]) {
      const again = await raw('', { 'if-none-match': inm });
      assert.equal(again.statusCode, 304, inm);
      assert.equal(again.body, '');
      assert.equal(again.headers.etag, etag);
    }
    assert.equal((await raw('', { 'if-none-match': 'W/"stale"' })).statusCode, 200);
    const narrowed = await raw('?country_id=101');
    assert.match(String(narrowed.headers.etag), /^W\/"/);
    assert.notEqual(narrowed.headers.etag, etag);
    assert.equal((await raw('?country_id=101', { 'if-none-match': etag })).statusCode, 200);
    assert.equal((await raw('?country_id=101', { 'if-none-match': String(narrowed.headers.etag) })).statusCode, 304);
  });

  it('sends the same data gzip- and br-compressed under the same weak ETag', async () => {
    const plain = await raw();
    const gz = await raw('', { 'accept-encoding': 'gzip, deflate' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.equal(gz.headers['content-type'], 'application/json; charset=utf-8');
    assert.ok(gz.rawPayload.length < plain.rawPayload.length / 4);
    assert.ok(gunzipSync(gz.rawPayload).equals(plain.rawPayload));
    const br = await raw('', { 'accept-encoding': 'gzip, br' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.ok(brotliDecompressSync(br.rawPayload).equals(plain.rawPayload));
    assert.equal(gz.headers.etag, plain.headers.etag);
    assert.equal(br.headers.etag, plain.headers.etag);
    const notModified = await raw('', { 'accept-encoding': 'gzip', 'if-none-match': gz.headers.etag as string });
    assert.equal(notModified.statusCode, 304);
    assert.equal(notModified.rawPayload.length, 0);
  });

  it('serialises a narrowed lookup through its response schema, element fields intact', async () => {
    const r = await t.a.get(PATH, { country_id: 101 });
    const { countries, states, cities } = r.body.message;
    assert.deepEqual(
      countries.find((c: { id: number }) => c.id === 101),
      { id: 101, name: 'India', iso2: 'IN', phonecode: '91' },
    );
    assert.ok(states.every((s: object) => Object.keys(s).join() === 'id,name,country_id,iso2'));
    assert.ok(cities.every((c: object) => Object.keys(c).join() === 'id,name,state_id,country_id'));
    assert.deepEqual(Object.keys(r.body), ['status', 'message']);
  });

  it('needs the keys', async () => {
    await assertNeedsKeys(t.anon, [['GET', PATH]]);
    const wrong = await t.app.inject({ method: 'GET', url: PATH, headers: { publickey: 'pk_x', secretkey: 'sk_y' } });
    assert.equal(wrong.statusCode, 401);
    assert.deepEqual(wrong.json(), { status: 'failed', errors: 'Invalid API credentials' });
  });
});
