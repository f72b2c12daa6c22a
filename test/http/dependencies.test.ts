/**
 * The two libraries pinned by `overrides` in package.json to releases that run on Node 20
 * (`cookie` 1.x under light-my-request, `content-disposition` 2.x under @fastify/static; their
 * newest majors want Node 22): the functions their dependants call are there and answer as the
 * dependants expect.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import fastifyStatic from '@fastify/static';

describe('the libraries pinned for Node 20', () => {
  it("light-my-request (app.inject) sends a test's cookies, encoded, in the Cookie header (cookie's stringifySetCookie)", async () => {
    const app = Fastify();
    app.get('/echo', async (request) => ({ cookie: request.headers.cookie }));
    try {
      const r = await app.inject({ method: 'GET', url: '/echo', cookies: { session: 'a b;c', other: 'x' } });
      assert.equal(r.statusCode, 200);
      assert.deepEqual(r.json(), { cookie: 'session=a%20b%3Bc; other=x' });
    } finally {
      await app.close();
    }
  });

  it("@fastify/static's reply.download names the file in Content-Disposition (content-disposition's create)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'campaign-static-'));
    writeFileSync(join(dir, 'résumé.csv'), 'email\n');
    const app = Fastify();
    await app.register(fastifyStatic, { root: dir, serve: false });
    app.get('/file', (_request, reply) => reply.download('résumé.csv'));
    try {
      const r = await app.inject({ method: 'GET', url: '/file' });
      assert.equal(r.statusCode, 200);
      assert.equal(r.body, 'email\n');
      assert.equal(r.headers['content-disposition'], `attachment; filename="r?sum?.csv"; filename*=UTF-8''r%C3%A9sum%C3%A9.csv`);
    } finally {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
