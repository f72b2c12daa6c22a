import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { App } from '../../src/app.js';
import type { IssuedKeys } from '../../src/modules/accounts/accounts.service.js';
import { setup, type TestContext } from '../helpers.js';

describe('request log', () => {
  let t: TestContext;
  let app: App;
  let keys: IssuedKeys;
  let output = '';
  const token = 'metrics-token-for-the-log-test';
  before(async () => {
    // Everything the app logs, as the JSON lines pino writes.
    const stream = { write: (line: string) => void (output += line) };
    t = await setup({ metricsToken: token }, { logger: { level: 'info', stream } });
    app = t.app;
    keys = t.a.keys!;
  });
  after(() => t.close());

  const lines = () =>
    output
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const requestLines = () => lines().filter((l) => l.msg === 'request');

  it('writes exactly one line per request: method, route pattern, status, time and account id', async () => {
    output = '';
    const r = await app.inject({
      method: 'GET',
      url: '/contacts-type?page=2',
      headers: { publickey: keys.public_key, secretkey: keys.secret_key },
    });
    assert.equal(r.statusCode, 200);
    const all = lines();
    assert.equal(all.length, 1, output);
    const [line] = all;
    assert.equal(line.msg, 'request');
    assert.equal(line.method, 'GET');
    assert.equal(line.route, '/contacts-type');
    assert.equal(line.status, 200);
    assert.equal(typeof line.ms, 'number');
    assert.ok((line.ms as number) >= 0);
    assert.equal(line.account, keys.user_id);
    assert.equal(line.level, 30);
  });

  it('logs no account for a request that is not authenticated, and no raw URL', async () => {
    output = '';
    await app.inject({ method: 'GET', url: '/contacts-type' });
    await app.inject({ method: 'GET', url: '/health/live' });
    await app.inject({ method: 'GET', url: '/nowhere/secret-path-segment' });
    const got = requestLines().map(({ method, route, status, account }) => ({ method, route, status, account }));
    assert.deepEqual(got, [
      { method: 'GET', route: '/contacts-type', status: 401, account: undefined },
      { method: 'GET', route: '/health/live', status: 200, account: undefined },
      { method: 'GET', route: null, status: 404, account: undefined },
    ]);
    assert.doesNotMatch(output, /secret-path-segment/);
  });

  it('never writes either API key nor the metrics token, whatever the outcome', async () => {
    output = '';
    const headers = { publickey: keys.public_key, secretkey: keys.secret_key };
    await app.inject({ method: 'GET', url: '/contacts-type', headers });
    await app.inject({ method: 'GET', url: '/contacts-type', headers: { ...headers, secretkey: keys.secret_key + 'x' } });
    await app.inject({ method: 'POST', url: '/contacts/add', headers, payload: { email: 'not an address' } });
    await app.inject({
      method: 'POST',
      url: '/contacts/add',
      headers: { ...headers, 'content-type': 'application/json' },
      payload: '{broken',
    });
    await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
    await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}!` } });
    assert.equal(requestLines().length, 6, output);
    for (const secret of [keys.public_key, keys.secret_key, token]) assert.ok(!output.includes(secret), secret);
  });
});
