import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { Client as SendGridClient } from '@sendgrid/client';
import { Client, setup, type TestContext } from '../../helpers.js';
import { keyClient } from '../access/keys.helpers.js';

const NOT_FOUND = { errors: [{ field: null, message: 'resource not found' }] };
const FORBIDDEN = { errors: [{ field: null, message: 'access forbidden' }] };

/** SendGrid's official client, pointed at the test server with a key of `c` as its API key. */
function sendGrid(base: string, c: Client): SendGridClient {
  const client = new SendGridClient();
  client.setApiKey(`${c.keys!.public_key}.${c.keys!.secret_key}`);
  client.setDefaultRequest('baseUrl', base);
  return client;
}

/** What a failing request of SendGrid's client says: status and body. */
async function failure(p: Promise<unknown>): Promise<{ code: number; body: unknown }> {
  try {
    await p;
  } catch (err) {
    const e = err as { code: number; response: { body: unknown } };
    return { code: e.code, body: e.response.body };
  }
  assert.fail('the request succeeded');
}

const json = (c: Client, method: string, url: string, body?: object) => c.request(method, url, body ? { json: body } : {});

describe('transactional templates', () => {
  let t: TestContext;
  let base: string;
  before(async () => {
    t = await setup();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/`;
  });
  after(() => t.close());

  it('creates, lists, reads, renames and deletes templates and versions through SendGrid’s client', async () => {
    const sg = sendGrid(base, t.a);
    const [created, template] = await sg.request({
      method: 'POST',
      url: '/v3/templates',
      body: { name: 'Password reset', generation: 'dynamic' },
    });
    assert.equal(created.statusCode, 201);
    assert.match(template.id, /^d-[0-9a-f]{32}$/);
    assert.deepEqual(
      { ...template, id: 'x', updated_at: 'x' },
      { id: 'x', name: 'Password reset', generation: 'dynamic', updated_at: 'x', versions: [] },
    );
    assert.match(template.updated_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);

    const [, v1] = await sg.request({
      method: 'POST',
      url: `/v3/templates/${template.id}/versions`,
      body: { name: 'First', subject: 'Reset for {{name}}', html_content: '<p>Hi {{name}}</p>', plain_content: 'Hi {{name}}', active: 0 },
    });
    // The first version is the active one, whatever was asked.
    assert.equal(v1.active, 1);
    assert.equal(v1.template_id, template.id);
    assert.equal(v1.subject, 'Reset for {{name}}');
    assert.equal(v1.editor, 'code');
    assert.equal(v1.generate_plain_content, true);

    const [v2res, v2] = await sg.request({
      method: 'POST',
      url: `/v3/templates/${template.id}/versions`,
      body: {
        name: 'Second',
        subject: 'Your reset',
        html_content: '<p>{{#if name}}{{name}}{{/if}}</p>',
        active: 1,
        test_data: '{"name":"Ann"}',
      },
    });
    assert.equal(v2res.statusCode, 201);
    assert.equal(v2.active, 1);
    assert.equal(v2.test_data, '{"name":"Ann"}');
    const [, withTwo] = await sg.request({ method: 'GET', url: `/v3/templates/${template.id}` });
    assert.deepEqual(
      withTwo.versions.map((v: { name: string; active: number }) => [v.name, v.active]),
      [
        ['First', 0],
        ['Second', 1],
      ],
    );

    const [, listed] = await sg.request({ method: 'GET', url: '/v3/templates', qs: { generations: 'dynamic', page_size: 10 } });
    assert.equal(listed.result.length, 1);
    assert.equal(listed.result[0].id, template.id);
    assert.equal(listed.result[0].versions.length, 2);
    assert.equal(listed.result[0].versions[0].html_content, undefined, 'the list leaves the contents out');
    assert.equal(listed._metadata.count, 1);

    const [, renamed] = await sg.request({ method: 'PATCH', url: `/v3/templates/${template.id}`, body: { name: 'Reset' } });
    assert.equal(renamed.name, 'Reset');

    const [, patched] = await sg.request({
      method: 'PATCH',
      url: `/v3/templates/${template.id}/versions/${v1.id}`,
      body: { subject: 'Reset, {{name}}' },
    });
    assert.equal(patched.subject, 'Reset, {{name}}');
    assert.equal(patched.active, 0);
    const [, activated] = await sg.request({ method: 'POST', url: `/v3/templates/${template.id}/versions/${v1.id}/activate` });
    assert.equal(activated.active, 1);
    const [, second] = await sg.request({ method: 'GET', url: `/v3/templates/${template.id}/versions/${v2.id}` });
    assert.equal(second.active, 0);

    const [deleted] = await sg.request({ method: 'DELETE', url: `/v3/templates/${template.id}/versions/${v2.id}` });
    assert.equal(deleted.statusCode, 204);
    assert.deepEqual(await failure(sg.request({ method: 'GET', url: `/v3/templates/${template.id}/versions/${v2.id}` })), {
      code: 404,
      body: NOT_FOUND,
    });
    const [gone] = await sg.request({ method: 'DELETE', url: `/v3/templates/${template.id}` });
    assert.equal(gone.statusCode, 204);
    assert.deepEqual(await failure(sg.request({ method: 'GET', url: `/v3/templates/${template.id}` })), { code: 404, body: NOT_FOUND });
  });

  it('pages the list with page_size and page_token, newest first', async () => {
    const ids: string[] = [];
    for (const name of ['P1', 'P2', 'P3']) ids.push((await json(t.b, 'POST', '/v3/templates', { name })).body.id);
    const first = await t.b.get('/v3/templates', { generations: 'dynamic', page_size: 2 });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(
      first.body.result.map((r: { name: string }) => r.name),
      ['P3', 'P2'],
    );
    assert.equal(first.body._metadata.count, 3);
    const token = new URL(first.body._metadata.next).searchParams.get('page_token')!;
    const second = await t.b.get('/v3/templates', { generations: 'dynamic', page_size: 2, page_token: token });
    assert.deepEqual(
      second.body.result.map((r: { name: string }) => r.name),
      ['P1'],
    );
    assert.equal(second.body._metadata.next, undefined);
    assert.deepEqual((await t.b.get('/v3/templates', { generations: 'legacy' })).body.result, []);
    const bad = await t.b.get('/v3/templates', { page_token: 'nonsense' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errors[0].field, 'page_token');
    const size = await t.b.get('/v3/templates', { page_size: 201 });
    assert.equal(size.status, 400);
    assert.equal(size.body.errors[0].field, 'page_size');
    for (const id of ids) assert.equal((await t.b.request('DELETE', `/v3/templates/${id}`)).status, 204);
  });

  it('refuses bad input with 400 naming each field', async () => {
    const missing = await json(t.a, 'POST', '/v3/templates', {});
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body, { errors: [{ message: 'The name field is required.', field: 'name', help: null }] });
    const long = await json(t.a, 'POST', '/v3/templates', { name: 'x'.repeat(101) });
    assert.deepEqual(
      long.body.errors.map((e: { field: string }) => e.field),
      ['name'],
    );
    const legacy = await json(t.a, 'POST', '/v3/templates', { name: 'Old', generation: 'legacy' });
    assert.deepEqual(
      legacy.body.errors.map((e: { field: string }) => e.field),
      ['generation'],
    );

    const id = (await json(t.a, 'POST', '/v3/templates', { name: 'Checked' })).body.id;
    const noSubject = await json(t.a, 'POST', `/v3/templates/${id}/versions`, { html_content: '<p>x</p>' });
    assert.deepEqual(noSubject.body.errors.map((e: { field: string }) => e.field).sort(), ['name', 'subject']);
    const invalid = await json(t.a, 'POST', `/v3/templates/${id}/versions`, {
      name: 'Broken',
      subject: 'Hi {{#if name}}',
      html_content: '<p>{{#each items}}</p>{{/if}}',
      plain_content: '{{> footer}}',
      test_data: '{not json',
    });
    assert.equal(invalid.status, 400);
    assert.deepEqual(
      invalid.body.errors.map((e: { field: string }) => e.field),
      ['subject', 'html_content', 'plain_content', 'test_data'],
    );
    assert.match(invalid.body.errors[0].message, /not valid Handlebars/);
    const tooLongSubject = await json(t.a, 'POST', `/v3/templates/${id}/versions`, { name: 'Long', subject: 's'.repeat(256) });
    assert.deepEqual(
      tooLongSubject.body.errors.map((e: { field: string }) => e.field),
      ['subject'],
    );
    assert.equal((await t.a.get(`/v3/templates/${id}`)).body.versions.length, 0, 'nothing was saved');
    const badActive = await json(t.a, 'POST', `/v3/templates/${id}/versions`, { name: 'A', subject: 'S', active: 2 });
    assert.deepEqual(
      badActive.body.errors.map((e: { field: string }) => e.field),
      ['active'],
    );
  });

  it('answers another account’s template or version with SendGrid’s 404, and changes nothing', async () => {
    const id = (await json(t.a, 'POST', '/v3/templates', { name: 'Mine' })).body.id;
    const vid = (await json(t.a, 'POST', `/v3/templates/${id}/versions`, { name: 'v', subject: 's' })).body.id;
    const otherId = (await json(t.b, 'POST', '/v3/templates', { name: 'Theirs' })).body.id;
    const calls: Array<[string, string, object?]> = [
      ['GET', `/v3/templates/${id}`],
      ['PATCH', `/v3/templates/${id}`, { name: 'Stolen' }],
      ['DELETE', `/v3/templates/${id}`],
      ['POST', `/v3/templates/${id}/versions`, { name: 'v', subject: 's' }],
      ['GET', `/v3/templates/${id}/versions/${vid}`],
      ['PATCH', `/v3/templates/${id}/versions/${vid}`, { name: 'Stolen' }],
      ['DELETE', `/v3/templates/${id}/versions/${vid}`],
      ['POST', `/v3/templates/${id}/versions/${vid}/activate`],
      // B's own template with A's version.
      ['GET', `/v3/templates/${otherId}/versions/${vid}`],
      ['GET', '/v3/templates/d-00000000000000000000000000000000'],
    ];
    for (const [method, url, body] of calls) {
      const r = await json(t.b, method, url, body);
      assert.equal(r.status, 404, `${method} ${url}`);
      assert.deepEqual(r.body, NOT_FOUND);
    }
    const mine = await t.a.get(`/v3/templates/${id}`);
    assert.equal(mine.body.name, 'Mine');
    assert.equal(mine.body.versions[0].name, 'v');
  });

  it('holds keys to the mail scopes, with SendGrid’s 403 and 401', async () => {
    const reader = await keyClient(t.a, ['mail.read']);
    const other = await keyClient(t.a, ['contacts.write']);
    assert.equal((await reader.get('/v3/templates')).status, 200);
    const write = await json(reader, 'POST', '/v3/templates', { name: 'No' });
    assert.equal(write.status, 403);
    assert.deepEqual(write.body, FORBIDDEN);
    const read = await other.get('/v3/templates');
    assert.equal(read.status, 403);
    assert.deepEqual(read.body, FORBIDDEN);
    assert.deepEqual(
      await failure(
        sendGrid(base, new Client(t.app, { ...t.a.keys!, secret_key: 'sk_wrong' })).request({ method: 'GET', url: '/v3/templates' }),
      ),
      {
        code: 401,
        body: { errors: [{ field: null, message: 'The provided authorization grant is invalid, expired, or revoked' }] },
      },
    );
  });

  it('repeats a create for a repeated Idempotency-Key', async () => {
    const headers = { 'idempotency-key': 'tpl-create-1' };
    const first = await t.a.request('POST', '/v3/templates', { json: { name: 'Once' }, headers });
    const again = await t.a.request('POST', '/v3/templates', { json: { name: 'Once' }, headers });
    assert.equal(again.status, 201);
    assert.equal(again.body.id, first.body.id);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    const reused = await t.a.request('POST', '/v3/templates', { json: { name: 'Other' }, headers });
    assert.equal(reused.status, 422);
    assert.deepEqual(reused.body, { errors: [{ field: 'Idempotency-Key', message: 'Idempotency-Key reused with a different request' }] });
  });
});
