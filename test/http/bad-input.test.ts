/** Regressions for the 5xx answers the fuzz test found, each at the mechanism that fixes it. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import { setup, type TestContext } from '../helpers.js';

describe('bad input found by the fuzz test', () => {
  let t: TestContext;
  before(async () => {
    t = await setup();
  });
  after(() => t.close());

  it('answers a page too large to turn into a row offset with 422, not a database error', async () => {
    for (const page of ['99999999999999999999', '1e20', '1000000001']) {
      const r = await t.a.request('GET', `/contacts-type?page=${page}`);
      assert.equal(r.status, 422, `${page}: ${r.text}`);
      assert.deepEqual(r.body, { status: 'failed', errors: { page: ['The page must not be greater than 1000000000.'] } });
    }
    const last = await t.a.get('/contacts-type', { page: 1_000_000_000 });
    assert.equal(last.status, 200, last.text);
    assert.deepEqual(last.body.message.contactTypes, []);
  });

  it('answers JSON nested deeper than 32 levels with 400, not a stack overflow', async () => {
    for (const depth of [33, 5000, 20000]) {
      for (const path of ['/contacts-type/add', '/contacts/upload-csv']) {
        const payload = '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
        const r = await t.a.request('POST', path, { payload, headers: { 'content-type': 'application/json' } });
        assert.equal(r.status, 400, `${depth} ${path}: ${r.text}`);
        assert.deepEqual(r.body, { status: 'failed', errors: 'The request nests fields more than 32 levels deep.' });
      }
    }
    const arrays = await t.a.request('POST', '/contacts/bulk-delete', {
      payload: JSON.stringify({ strIds: [[[[[[1]]]]]] }),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(arrays.status, 422, arrays.text);
  });

  it('answers a URL with a malformed percent-encoding in its path in the envelope', async () => {
    for (const path of ['/%zz', '/contacts/%FF', '/contacts-type/%E2%82']) {
      const r = await t.a.request('GET', path);
      assert.equal(r.status, 400, path);
      assert.deepEqual(r.body, { status: 'failed', errors: 'The URL has a malformed percent-encoding.' });
    }
  });

  it('answers a request that is not valid HTTP in the envelope', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    for (const raw of [
      'GET / HTTP/1.1\r\nBad Header: x\r\n\r\n',
      'POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab',
      'GET /\u00ff HTTP/9\r\n\r\n',
    ]) {
      const text = await new Promise<string>((resolve) => {
        const chunks: Buffer[] = [];
        const socket = net.connect(port, '127.0.0.1', () => socket.write(Buffer.from(raw, 'latin1')));
        socket.on('data', (c) => chunks.push(c));
        socket.on('error', () => undefined);
        socket.on('close', () => resolve(Buffer.concat(chunks).toString()));
      });
      assert.match(text, /^HTTP\/1\.1 400 Bad Request\r\n/, JSON.stringify(raw));
      assert.match(text, /\r\nContent-Type: application\/json; charset=utf-8\r\n/);
      assert.ok(text.endsWith('\r\n\r\n{"status":"failed","errors":"The request is not valid HTTP."}'), text);
    }
    const huge = await new Promise<string>((resolve) => {
      const chunks: Buffer[] = [];
      const socket = net.connect(port, '127.0.0.1', () =>
        socket.write(`GET /contacts-type HTTP/1.1\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`),
      );
      socket.on('data', (c) => chunks.push(c));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(Buffer.concat(chunks).toString()));
    });
    assert.match(huge, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    assert.ok(huge.endsWith('{"status":"failed","errors":"The request headers are too large."}'), huge);
  });
});
