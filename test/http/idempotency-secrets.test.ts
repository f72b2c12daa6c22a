/**
 * One rule keeps secrets out of the answers kept for an `Idempotency-Key`: the fields a response
 * schema marks `x-secret` (and the OpenAPI document shows marked) are kept as null. No route lists
 * its secrets elsewhere, and a response property named like a secret must carry the mark.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import { ok } from '../../src/http/envelope.js';
import { Success } from '../../src/http/schemas.js';
import { isSecret, Secret, SECRET_MARK } from '../../src/http/secret-fields.js';
import { setup, type Response, type TestContext } from '../helpers.js';

const key = (k: string) => ({ 'idempotency-key': k });

/** A property name that says its value is a secret. */
const SECRET_NAME = /secret|password|token/i;

/**
 * Response properties named like a secret that are not one, each with its reason: the open
 * tokens of a send's mail are what its tracking links carry, readable by any reader of the send
 * at any time (no answer shows them once), and recording an open is all they can do.
 */
const NOT_SECRETS: Record<string, string> = {
  unique_open_token: 'the open tokens of the mail a send sent, shown by every read of the send',
};

describe('secrets in the answers kept for an Idempotency-Key', () => {
  let t: TestContext;
  const TOKENS = ['tok-one-9f2c', 'tok-two-77ab'];
  before(async () => {
    t = await setup(
      {},
      {
        // A route of this test only: a marked secret deep inside its answer, and no other declaration.
        beforeReady: (app) =>
          app.post(
            '/test/secret-answer',
            {
              config: { scope: 'none' },
              schema: {
                response: {
                  200: Success(
                    Type.Object({
                      id: Type.Integer(),
                      grants: Type.Array(Type.Object({ name: Type.String(), token: Secret(Type.String()) })),
                    }),
                  ),
                },
              },
            },
            async () => ok({ id: 7, grants: TOKENS.map((token, i) => ({ name: `g${i}`, token })) }),
          ),
      },
    );
  });
  after(() => t.close());

  /** Every answer body kept for account A, as stored. */
  const stored = async () =>
    (await t.database.db.selectFrom('idempotency_keys').select('body').where('user_id', '=', t.a.keys!.user_id).execute())
      .map((r) => r.body ?? '')
      .join('\n');

  /** Sends the request twice with one key; asserts the second is the replay of the first with `nulled` set to null. */
  async function replayed(send: () => Promise<Response>, nulled: (message: any) => void): Promise<Response> {
    const first = await send();
    assert.equal(first.status, 200, first.text);
    const again = await send();
    assert.equal(again.headers['idempotent-replayed'], 'true');
    const expected = structuredClone(first.body);
    nulled(expected.message);
    assert.deepEqual([again.status, again.body], [200, expected]);
    return first;
  }

  it('keeps a key without its secret (POST /keys/create)', async () => {
    const send = () => t.a.request('POST', '/keys/create', { json: { name: 'Shop', scopes: ['contacts.read'] }, headers: key('k-key') });
    const first = await replayed(send, (m) => (m.secret_key = null));
    assert.match(first.body.message.secret_key, /^sk_/);
    assert.ok(!(await stored()).includes(first.body.message.secret_key));
  });

  it('keeps a webhook endpoint without its signing secret (create and rotate-secret)', async () => {
    const create = () =>
      t.a.request('POST', '/webhooks/endpoints/create', {
        form: { url: 'https://93.184.216.34/hook', events: ['*'] },
        headers: key('k-hook'),
      });
    const made = await replayed(create, (m) => (m.secret = null));
    const rotate = () =>
      t.a.request('POST', '/webhooks/endpoints/rotate-secret', { form: { id: made.body.message.id }, headers: key('k-rot') });
    const rotated = await replayed(rotate, (m) => (m.secret = null));
    const kept = await stored();
    for (const secret of [made.body.message.secret, rotated.body.message.secret]) assert.ok(!kept.includes(secret));
    assert.doesNotMatch(kept, /whsec_/);
  });

  it('keeps any route without the fields its schema marks, wherever they sit (a route declaring nothing else)', async () => {
    const send = () => t.a.request('POST', '/test/secret-answer', { form: {}, headers: key('k-test') });
    await replayed(send, (m) => m.grants.forEach((g: { token: unknown }) => (g.token = null)));
    const kept = await stored();
    for (const token of TOKENS) assert.ok(!kept.includes(token), token);
    assert.match(kept, /"name":"g1","token":null/);
  });

  it('documents each marked field with its mark, and as null in a replay', () => {
    const doc = t.app.swagger() as any;
    const message = (path: string) => doc.paths[path].post.responses['200'].content['application/json'].schema.properties.message;
    for (const [path, field] of [
      ['/webhooks/endpoints/create', 'secret'],
      ['/webhooks/endpoints/rotate-secret', 'secret'],
      ['/keys/create', 'secret_key'],
    ]) {
      const p = message(path).properties[field];
      assert.equal(p[SECRET_MARK], true, `${path} ${field}`);
      assert.deepEqual(p.anyOf[1], { type: 'null' }, `${path} ${field}`);
    }
    assert.equal(message('/test/secret-answer').properties.grants.items.properties.token[SECRET_MARK], true);
  });

  it('finds the mark on every response property named like a secret (a new route cannot forget it)', () => {
    const doc = t.app.swagger() as any;
    const unmarked: string[] = [];
    const walk = (schema: any, where: string, inSecret: boolean) => {
      if (!schema || typeof schema !== 'object') return;
      const secret = inSecret || isSecret(schema);
      for (const [name, child] of Object.entries<any>(schema.properties ?? {})) {
        const marked = secret || isSecret(child) || (child.anyOf ?? []).some(isSecret);
        if (SECRET_NAME.test(name) && !marked && !(name in NOT_SECRETS)) unmarked.push(`${where} ${name}`);
        walk(child, `${where}.${name}`, marked);
      }
      for (const k of ['items', 'additionalProperties']) walk(schema[k], where, secret);
      for (const k of ['anyOf', 'oneOf', 'allOf']) for (const b of schema[k] ?? []) walk(b, where, secret);
    };
    let seen = 0;
    for (const [path, item] of Object.entries<any>(doc.paths))
      for (const [method, op] of Object.entries<any>(item))
        for (const [code, answer] of Object.entries<any>(op.responses ?? {}))
          for (const media of Object.values<any>(answer.content ?? {})) {
            walk(media.schema, `${method.toUpperCase()} ${path} ${code}`, false);
            seen++;
          }
    assert.ok(seen > 300, `${seen} answers read`);
    assert.deepEqual(unmarked, []);
    // The check would see a forgotten mark: the same walk over an unmarked copy finds it.
    walk({ properties: { message: { properties: { api_token: { type: 'string' } } } } }, 'a route that forgot', false);
    assert.deepEqual(unmarked, ['a route that forgot.message api_token']);
  });
});
