import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SCOPES } from '../../src/http/scopes.js';
import { ok } from '../../src/http/envelope.js';
import { Client, setup, type TestContext } from '../helpers.js';
import { keyClient, keyRefused } from '../modules/access/keys.helpers.js';

/** Every keyed operation of the OpenAPI document: method, a concrete URL, and its declared scope. */
export function keyedOperations(doc: any): Array<{ method: string; path: string; url: string; scope: string | undefined }> {
  const out = [];
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(ops)) {
      if (Array.isArray(op.security) && op.security.length === 0) continue;
      if (op['x-auth'] === 'session') continue;
      out.push({ method: method.toUpperCase(), path, url: path.replace(/\{[^}]+\}/g, '1'), scope: op['x-scope'] as string | undefined });
    }
  }
  return out;
}

describe('scopes of keyed routes', () => {
  let t: TestContext;
  let doc: any;
  before(async () => {
    t = await setup();
    doc = (await t.anon.get('/openapi.json')).body;
  });
  after(() => t.close());

  it('every keyed route declares a scope, shown in the document', () => {
    const ops = keyedOperations(doc);
    assert.ok(ops.length > 100, `${ops.length} keyed operations`);
    const undeclared = ops.filter((o) => o.scope === undefined).map((o) => `${o.method} ${o.path}`);
    assert.deepEqual(undeclared, []);
    for (const o of ops) {
      assert.ok(o.scope === 'none' || SCOPES.includes(o.scope as never), `${o.method} ${o.path}: ${o.scope}`);
      const op = doc.paths[o.path][o.method.toLowerCase()];
      if (o.scope !== 'none') {
        assert.match(op.description, new RegExp(`Scope: \`${o.scope!.replace('.', '\\.')}\``), `${o.method} ${o.path}`);
        assert.ok(op.responses['403'], `${o.method} ${o.path}: 403 documented`);
      }
    }
    assert.deepEqual(
      ops.filter((o) => o.scope === 'none').map((o) => o.path),
      ['/get/country-state-city'],
    );
  });

  it('refuses a key without the route’s scope with 403 naming it, and lets one with it through', async () => {
    const without = new Map<string, Client>();
    const only = new Map<string, Client>();
    const failures: string[] = [];
    for (const o of keyedOperations(doc)) {
      if (o.scope === 'none' || o.scope === undefined) continue;
      const scope = o.scope;
      // Every scope but this one (and but its area's write, which includes it).
      const area = scope.split('.')[0];
      const rest = SCOPES.filter((s) => s !== scope && !(scope.endsWith('.read') && s === `${area}.write`));
      if (!without.has(scope)) without.set(scope, await keyClient(t.a, [...rest], `without ${scope}`));
      if (!only.has(scope)) only.set(scope, await keyClient(t.a, [scope], `only ${scope}`));
      const refused = await without.get(scope)!.request(o.method, o.url);
      // Under /v3/, SendGrid's 403.
      const expected = o.path.startsWith('/v3/') ? { errors: [{ field: null, message: 'access forbidden' }] } : keyRefused(scope);
      if (refused.status !== 403 || JSON.stringify(refused.body) !== JSON.stringify(expected))
        failures.push(`${o.method} ${o.path} without ${scope}: ${refused.status} ${refused.text.slice(0, 100)}`);
      const allowed = await only.get(scope)!.request(o.method, o.url);
      if (allowed.status === 403 || allowed.status === 401)
        failures.push(`${o.method} ${o.path} with ${scope}: ${allowed.status} ${allowed.text.slice(0, 100)}`);
    }
    assert.deepEqual(failures, []);
  });

  it('lets a key of any scope use the country, state and city lookup', async () => {
    const k = await keyClient(t.a, ['audit.read']);
    const r = await k.get('/get/country-state-city', { country_id: 101, state_id: 4008 });
    assert.equal(r.status, 200);
  });
});

describe('a keyed route that declares no scope', () => {
  let t: TestContext;
  before(async () => {
    t = await setup({}, { beforeReady: (app) => app.get('/undeclared', async () => ok('reached')) });
  });
  after(() => t.close());

  it('is open to full keys only', async () => {
    // Straight through inject: the route is the test's own, documented with no answer.
    const call = (k: Client) =>
      t.app.inject({ method: 'GET', url: '/undeclared', headers: { publickey: k.keys!.public_key, secretkey: k.keys!.secret_key } });
    const r = await call(await keyClient(t.a, [...SCOPES]));
    assert.equal(r.statusCode, 403);
    assert.deepEqual(r.json(), keyRefused('use this route'));
    assert.equal((await call(t.a)).statusCode, 200);
  });
});
