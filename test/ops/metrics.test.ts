import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Gauge } from 'prom-client';
import { setup, type TestContext } from '../helpers.js';

/** The value of one sample line of a Prometheus text body, or undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = (m[2] ?? '').split(',');
    if (want.every((w) => have.includes(w))) return Number(m[3]);
  }
  return undefined;
}

describe('metrics (open)', () => {
  let t: TestContext;
  before(async () => {
    t = await setup({ rateLimitPerMinute: 1 });
  });
  after(() => t.close());

  it('serves the Prometheus text format without keys', async () => {
    const r = await t.anon.get('/metrics');
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    assert.match(r.text, /^# HELP /m);
  });

  it('counts requests by route pattern and status, never by raw URL', async () => {
    await t.a.get('/contacts-type', { probe: 'x1' });
    await t.a.get('/contacts-type');
    await t.anon.get('/contacts-type');
    await t.anon.get('/no/such/route/4711');
    const text = (await t.anon.get('/metrics')).text;
    assert.equal(sample(text, 'http_requests_total', { method: 'GET', route: '/contacts-type', status_code: '200' }), 1);
    // The second call of account a is over its limit of one a minute; the anonymous one fails auth.
    assert.equal(sample(text, 'http_requests_total', { method: 'GET', route: '/contacts-type', status_code: '429' }), 1);
    assert.equal(sample(text, 'http_requests_total', { method: 'GET', route: '/contacts-type', status_code: '401' }), 1);
    assert.equal(sample(text, 'http_requests_total', { method: 'GET', route: 'unmatched', status_code: '404' }), 1);
    // Only label values could carry a raw URL (metric values are numbers that may hold any digits).
    assert.doesNotMatch(text, /"[^"\n]*(4711|probe|x1)[^"\n]*"/);
  });

  it('keeps a latency histogram per route', async () => {
    const text = (await t.anon.get('/metrics')).text;
    assert.equal(sample(text, 'http_request_duration_seconds_count', { method: 'GET', route: '/contacts-type' }), 3);
    assert.equal(sample(text, 'http_request_duration_seconds_bucket', { method: 'GET', route: '/contacts-type', le: '+Inf' }), 3);
    assert.ok(sample(text, 'http_request_duration_seconds_sum', { method: 'GET', route: '/contacts-type' })! > 0);
  });

  it('includes the process metrics', async () => {
    const text = (await t.anon.get('/metrics')).text;
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_seconds',
    ]) {
      assert.ok(sample(text, name, {}) !== undefined, name);
    }
  });

  it('shows what other parts of the process register on deps.metrics', async () => {
    const gauge = new Gauge({
      name: 'campaign_test_queue_depth',
      help: 'A gauge added from outside the app.',
      registers: [t.app.deps.metrics],
    });
    gauge.set(42);
    assert.equal(sample((await t.anon.get('/metrics')).text, 'campaign_test_queue_depth', {}), 42);
  });

  it('counts per app: a second app in the same process starts from zero', async () => {
    const other = await setup();
    try {
      await other.a.get('/contacts-type');
      const text = (await other.anon.get('/metrics')).text;
      assert.equal(sample(text, 'http_requests_total', { method: 'GET', route: '/contacts-type', status_code: '200' }), 1);
      assert.equal(sample(text, 'http_requests_total', { method: 'GET', route: '/contacts-type', status_code: '429' }), undefined);
      assert.equal(sample(text, 'campaign_test_queue_depth', {}), undefined);
    } finally {
      await other.close();
    }
  });

  it('is not rate-limited', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await t.a.get('/metrics')).status, 200);
  });
});

describe('metrics with METRICS_TOKEN', () => {
  let t: TestContext;
  const token = 'metrics-token-0123456789';
  before(async () => {
    t = await setup({ metricsToken: token });
  });
  after(() => t.close());

  const scrape = (authorization?: string) =>
    t.anon.request('GET', '/metrics', { headers: authorization === undefined ? {} : { authorization } });

  it('answers 401 in the failure envelope without the bearer token', async () => {
    for (const authorization of [undefined, '', 'Bearer', `Bearer ${token}x`, `Bearer ${token.slice(0, -1)}`, `Basic ${token}`, token]) {
      const r = await scrape(authorization);
      assert.equal(r.status, 401, String(authorization));
      assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
      assert.deepEqual(r.body, {
        status: 'failed',
        errors: 'A valid metrics token is required: send Authorization: Bearer <METRICS_TOKEN>.',
      });
      assert.equal(r.headers['www-authenticate'], 'Bearer realm="metrics"');
    }
  });

  it('serves the metrics with the right token (scheme in any letter case), and API keys are not needed', async () => {
    for (const authorization of [`Bearer ${token}`, `bearer ${token}`]) {
      const r = await scrape(authorization);
      assert.equal(r.status, 200, authorization);
      assert.match(r.text, /http_requests_total/);
    }
  });

  it('leaves the health routes open', async () => {
    assert.equal((await t.anon.get('/health/live')).status, 200);
    assert.equal((await t.anon.get('/health/ready')).status, 200);
  });
});
