import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { setup, type TestContext } from '../helpers.js';
import { keyClient } from '../modules/access/keys.helpers.js';
import { v3Responses } from '../../src/http/sendgrid.js';
import { NotFound } from '../../src/http/errors.js';

const UNAUTHORIZED = { errors: [{ field: null, message: 'The provided authorization grant is invalid, expired, or revoked' }] };
const FORBIDDEN = { errors: [{ field: null, message: 'access forbidden' }] };
const NOT_FOUND = { errors: [{ field: null, message: 'resource not found' }] };

/** A body shaped like a part of SendGrid's mail send, so that field paths nest as there. */
const Body = Type.Object({
  personalizations: Type.Array(Type.Object({ to: Type.Array(Type.Object({ email: Type.String({ format: 'email' }) }), { minItems: 1 }) }), {
    minItems: 1,
  }),
  subject: Type.String({ maxLength: 10 }),
});

describe('errors under /v3/', () => {
  let t: TestContext;
  const bearer = (c: { keys: { public_key: string; secret_key: string } | null }) => `Bearer ${c.keys!.public_key}.${c.keys!.secret_key}`;
  const call = (opts: { method?: 'GET' | 'POST'; url?: string; auth?: string; body?: unknown; headers?: Record<string, string> }) =>
    t.app.inject({
      method: opts.method ?? 'POST',
      url: opts.url ?? '/v3/test/echo',
      headers: { ...(opts.auth ? { authorization: opts.auth } : {}), 'content-type': 'application/json', ...opts.headers },
      payload: typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body ?? {}),
    });

  before(async () => {
    t = await setup(
      { rateLimitPerMinute: 30 },
      {
        beforeReady: (app) => {
          // Test routes under /v3/: one that validates a nested body, one whose record is not found.
          app.post(
            '/v3/test/echo',
            { config: { scope: 'mail.write' }, schema: { body: Body, response: v3Responses(202, null) } },
            async (_req, reply) => reply.code(202).send(),
          );
          app.get(
            '/v3/test/missing',
            { config: { scope: 'mail.read' }, schema: { response: v3Responses(200, Type.Object({}), { notFound: true }) } },
            async () => {
              throw new NotFound();
            },
          );
        },
      },
    );
  });
  after(() => t.close());

  it('answers a valid request as the route does', async () => {
    const r = await call({ auth: bearer(t.a), body: { personalizations: [{ to: [{ email: 'a@example.com' }] }], subject: 'Hi' } });
    assert.equal(r.statusCode, 202, r.body);
  });

  it('answers no key, a malformed bearer, a wrong secret and a revoked key with SendGrid’s 401', async () => {
    const revoked = await keyClient(t.a, 'full', 'Soon revoked');
    const id = (await t.a.get('/keys')).body.message.keys.find((k: { name: string }) => k.name === 'Soon revoked').id;
    assert.equal((await t.a.delete('/keys/delete', { id })).status, 200);
    for (const auth of [undefined, 'Bearer nonsense', `Bearer ${t.a.keys!.public_key}.sk_wrong`, bearer(revoked)]) {
      const r = await call({ auth, body: {} });
      assert.equal(r.statusCode, 401, String(auth));
      assert.deepEqual(r.json(), UNAUTHORIZED);
    }
    // The two headers work under /v3/ too, and fail alike.
    const headers = { publickey: t.a.keys!.public_key, secretkey: 'sk_wrong' };
    assert.deepEqual((await call({ headers, body: {} })).json(), UNAUTHORIZED);
  });

  it('answers a key without the scope with SendGrid’s 403', async () => {
    const reader = await keyClient(t.a, ['mail.read']);
    const r = await call({ auth: bearer(reader), body: {} });
    assert.equal(r.statusCode, 403);
    assert.deepEqual(r.json(), FORBIDDEN);
  });

  it('answers every invalid field at once, with 400 and SendGrid’s dotted field paths', async () => {
    const r = await call({
      auth: bearer(t.a),
      body: { personalizations: [{ to: [{ email: 'not an address' }] }], subject: 'x'.repeat(11) },
    });
    assert.equal(r.statusCode, 400);
    const body = r.json();
    assert.deepEqual(body.errors.map((e: { field: string }) => e.field).sort(), ['personalizations.0.to.0.email', 'subject']);
    for (const e of body.errors) {
      assert.equal(e.help, null);
      assert.equal(typeof e.message, 'string');
    }
    const missing = await call({ auth: bearer(t.a), body: {} });
    assert.deepEqual(
      missing
        .json()
        .errors.map((e: { field: string }) => e.field)
        .sort(),
      ['personalizations', 'subject'],
    );
  });

  it('answers malformed JSON, an oversized body, an unknown record and an unknown route in the same shape', async () => {
    const bad = await call({ auth: bearer(t.a), body: '{"personalizations": [' });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), { errors: [{ field: null, message: 'The request body is not valid JSON.' }] });
    const big = await call({ auth: bearer(t.a), body: JSON.stringify({ subject: 'x'.repeat(11 * 1024 * 1024) }) });
    assert.equal(big.statusCode, 413);
    assert.deepEqual(big.json(), { errors: [{ field: null, message: 'The request body is too large.' }] });
    const missing = await call({ method: 'GET', url: '/v3/test/missing', auth: bearer(t.a) });
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(missing.json(), NOT_FOUND);
    const route = await call({ method: 'GET', url: '/v3/no/such/route', auth: bearer(t.a) });
    assert.equal(route.statusCode, 404);
    assert.deepEqual(route.json(), NOT_FOUND);
  });

  it('keeps the envelope on every other route', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/contacts-type', headers: { authorization: 'Bearer nonsense' } });
    assert.equal(r.statusCode, 401);
    assert.deepEqual(r.json(), { status: 'failed', errors: 'Invalid API credentials' });
    const route = await t.app.inject({ method: 'GET', url: '/no/such/route' });
    assert.deepEqual(route.json(), { status: 'failed', errors: 'Route not found' });
  });

  it('answers the rate limit with SendGrid’s 429 and its headers', async () => {
    const k = await keyClient(t.a, 'full', 'Busy');
    let last;
    for (let i = 0; i < 31; i++) last = await call({ method: 'GET', url: '/v3/test/missing', auth: bearer(k) });
    assert.equal(last!.statusCode, 429);
    assert.deepEqual(last!.json(), { errors: [{ field: null, message: 'too many requests' }] });
    assert.ok(Number(last!.headers['retry-after']) >= 1);
  });
});
