import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setup, type TestContext } from '../helpers.js';
import { postRaw } from './relay-support.js';

const ROUTES = ['/inbound/sendgrid', '/inbound/mailgun', '/inbound/postmark', '/inbound/ses'];

describe('the relay webhooks without their settings', () => {
  let t: TestContext;
  before(async () => {
    t = await setup();
  });
  after(() => t.close());

  it('answer 404 Route not found, whatever the body, and read nothing of it', async () => {
    for (const url of ROUTES) {
      for (const body of ['[]', '{"Type":"Notification"}', '{not json']) {
        const r = await postRaw(t.app, url, body);
        assert.equal(r.status, 404, url);
        assert.deepEqual(r.body, { status: 'failed', errors: 'Route not found' });
      }
    }
  });

  it('are in the OpenAPI document: public, tagged, with their bodies and answers described', async () => {
    const doc = (await t.anon.get('/openapi.json')).body;
    for (const url of ROUTES) {
      const op = doc.paths[url]?.post;
      assert.ok(op, url);
      assert.deepEqual(op.security, []);
      assert.deepEqual(op.tags, ['Relay webhooks']);
      assert.ok(op.summary && op.description, url);
      assert.ok(op.requestBody?.content?.['application/json'], url);
      for (const code of ['200', '400', '401', '404', '500']) assert.ok(op.responses[code]?.description, `${url} ${code}`);
    }
    assert.ok(doc.paths['/inbound/ses'].post.requestBody.content['text/plain']);
    assert.ok(doc.tags.some((tag: { name: string }) => tag.name === 'Relay webhooks'));
  });

  it('leave the other routes their own body parsers', async () => {
    const r = await t.a.request('POST', '/contacts-type/add', { json: { name: 'Still JSON' } });
    assert.equal(r.status, 200);
  });
});
