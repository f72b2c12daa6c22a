import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { OkText, responses } from '../../src/http/schemas.js';
import { make, setup, type TestContext } from '../helpers.js';

const JSON_TYPE = 'application/json; charset=utf-8';

describe('envelope and errors', () => {
  let t: TestContext;
  before(async () => {
    t = await setup();
  });
  after(() => t.close());

  it('answers an unknown path with 404 Route not found, with or without keys', async () => {
    for (const c of [t.a, t.anon]) {
      const r = await c.get('/no/such/path');
      assert.equal(r.status, 404);
      assert.equal(r.headers['content-type'], JSON_TYPE);
      assert.deepEqual(r.body, { status: 'failed', errors: 'Route not found' });
    }
  });

  it('answers an unknown method on a known path with 404 Route not found', async () => {
    const r = await t.a.request('PUT', '/contacts/list');
    assert.equal(r.status, 404);
    assert.deepEqual(r.body, { status: 'failed', errors: 'Route not found' });
    const del = await t.a.request('PATCH', '/contacts-type/add');
    assert.deepEqual(del.body, { status: 'failed', errors: 'Route not found' });
  });

  it('ignores a trailing slash', async () => {
    const r = await t.a.get('/contacts-type/');
    assert.equal(r.status, 200);
  });

  it('sends every kind of response as application/json; charset=utf-8', async () => {
    const id = await make.contactType(t.a);
    const responses = [
      await t.a.get('/contacts-type'), // streamed list
      await t.a.get('/contacts-type', { page: 1 }), // paged list
      await t.a.get('/contacts-type/view', { contact_type_id: id }),
      await t.a.post('/contacts-type/add', { name: 'Envelope' }),
      await t.a.post('/contacts-type/add', {}), // 422
      await t.a.get('/contacts/details', { contact_id: 999999 }), // 404
      await t.anon.get('/contacts-type'), // 401
      await t.a.request('POST', '/contacts-type/add', { payload: '{bad', headers: { 'content-type': 'application/json' } }), // 400
    ];
    for (const r of responses) {
      assert.equal(r.headers['content-type'], JSON_TYPE, `${r.status} ${r.text.slice(0, 80)}`);
      assert.ok(r.body && typeof r.body === 'object', r.text.slice(0, 80));
      assert.ok(['success', 'failed'].includes(r.body.status));
    }
  });

  it('answers a malformed JSON body with 400 and a text', async () => {
    const r = await t.a.request('POST', '/contacts-type/add', { payload: '{"name": "x', headers: { 'content-type': 'application/json' } });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { status: 'failed', errors: 'The request body is not valid JSON.' });
  });

  it('answers an unsupported content type with 415 and a text', async () => {
    const r = await t.a.request('POST', '/contacts-type/add', {
      payload: '<name>x</name>',
      headers: { 'content-type': 'application/xml' },
    });
    assert.equal(r.status, 415);
    assert.equal(r.body.status, 'failed');
    assert.equal(typeof r.body.errors, 'string');
  });

  it('answers a body over 10 MB with 413 and stores nothing, for form and JSON bodies', async () => {
    const big = 'x'.repeat(10 * 1024 * 1024 + 10);
    const form = await t.a.request('POST', '/contacts-type/add', {
      payload: `name=${big}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(form.status, 413);
    assert.deepEqual(form.body, { status: 'failed', errors: 'The request body is too large.' });
    const json = await t.a.request('POST', '/contacts-type/add', {
      payload: JSON.stringify({ name: big }),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(json.status, 413);
    assert.deepEqual(json.body, { status: 'failed', errors: 'The request body is too large.' });
    const count = await t.database.db
      .selectFrom('contact_types')
      .select((e) => e.fn.countAll().as('n'))
      .where('name', 'like', 'xxxx%')
      .executeTakeFirst();
    assert.equal(Number(count?.n), 0);
  });

  it('answers multipart fields over 10 MB, in one field or together, with 413 instead of cutting them', async () => {
    const b = 'LIMITTEST';
    const body = (fields: Array<[string, string]>) =>
      fields.map(([n, v]) => `--${b}\r\nContent-Disposition: form-data; name="${n}"\r\n\r\n${v}\r\n`).join('') + `--${b}--\r\n`;
    const headers = { 'content-type': `multipart/form-data; boundary=${b}` };
    const one = await t.a.request('POST', '/contacts-type/add', { payload: body([['name', 'q'.repeat(10 * 1024 * 1024 + 1)]]), headers });
    assert.equal(one.status, 413);
    assert.deepEqual(one.body, { status: 'failed', errors: 'The request body is too large.' });
    const parts: Array<[string, string]> = Array.from({ length: 11 }, (_, i) => [`pad${i}`, 'a'.repeat(1024 * 1024)]);
    const many = await t.a.request('POST', '/contacts-type/add', { payload: body([...parts, ['name', 'Sneaky']]), headers });
    assert.equal(many.status, 413);
    const list = await t.a.get('/contacts-type');
    assert.ok(!list.body.message.contactTypes.some((x: { name: string }) => x.name === 'Sneaky'));
  });

  it('accepts a body just under the limit', async () => {
    const name = 'y'.repeat(200);
    const pad = 'z'.repeat(9 * 1024 * 1024);
    const r = await t.a.request('POST', '/contacts-type/add', {
      payload: `name=${name}&pad=${pad}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(r.status, 200, r.text);
  });

  it('gzips a response over 1 KB when the client accepts gzip, and not a small one', async () => {
    for (let i = 0; i < 20; i++) await make.contactType(t.a);
    for (const query of [undefined, { page: 1, per_page: 50 }]) {
      const res = await t.app.inject({
        method: 'GET',
        url: '/contacts-type' + (query ? '?page=1&per_page=50' : ''),
        headers: { publickey: t.a.keys!.public_key, secretkey: t.a.keys!.secret_key, 'accept-encoding': 'gzip' },
      });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-encoding'], 'gzip');
      assert.equal(res.headers['content-type'], JSON_TYPE);
      const body = JSON.parse(gunzipSync(res.rawPayload).toString('utf8'));
      assert.ok(body.message.contactTypes.length >= 20);
    }
    const small = await t.app.inject({
      method: 'GET',
      url: '/contacts/details?contact_id=1',
      headers: { publickey: t.a.keys!.public_key, secretkey: t.a.keys!.secret_key, 'accept-encoding': 'gzip' },
    });
    assert.equal(small.headers['content-encoding'], undefined);
    const plain = await t.a.get('/contacts-type');
    assert.equal(plain.headers['content-encoding'], undefined);
  });

  it('formats timestamps as YYYY-MM-DDTHH:MM:SS.ffffffZ', async () => {
    const id = await make.contactType(t.a);
    const r = await t.a.get('/contacts-type/view', { contact_type_id: id });
    assert.match(r.body.message.contactType.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    assert.match(r.body.message.contactType.updated_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    assert.equal(r.body.message.contactType.deleted_at, null);
  });
});

describe('unexpected failures', () => {
  it('answers a thrown error with 500 Internal Server Error and no stack trace', async () => {
    // Registered before ready(): a route that fails the way a bug would.
    // Documented like every route: the test client checks answers against the document.
    const schema = { response: responses(OkText) };
    const t = await setup(
      {},
      {
        beforeReady: (app) => {
          app.get('/test/boom', { schema }, async () => {
            throw new Error('secret detail at /srv/app.ts:12');
          });
          app.get('/test/boom-value', { schema }, async () => {
            throw 'a thrown string';
          });
        },
      },
    );
    try {
      const c = t.a;
      for (const path of ['/test/boom', '/test/boom-value']) {
        const r = await c.get(path);
        assert.equal(r.status, 500);
        assert.equal(r.headers['content-type'], JSON_TYPE);
        assert.deepEqual(r.body, { status: 'failed', errors: 'Internal Server Error' });
        assert.ok(!r.text.includes('secret detail'));
      }
    } finally {
      await t.close();
    }
  });
});
