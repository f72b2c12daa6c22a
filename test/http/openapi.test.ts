import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { setup, type TestContext } from '../helpers.js';
import { OpenApiCheck, type OpenApiDocument } from '../support/openapi-check.js';

const PUBLIC = [
  '/openapi.json',
  '/docs',
  '/images/templates/{file}',
  '/media/{token}/{file}',
  '/media/{token}/thumb/{file}',
  '/sender/verify',
  '/t/open/{token}.gif',
  '/t/click/{token}',
  '/u/{token}',
  '/designs/{utr}',
  '/inbound/email/{token}',
  '/health/live',
  '/health/ready',
  '/metrics',
  '/inbound/sendgrid',
  '/inbound/mailgun',
  '/inbound/postmark',
  '/inbound/ses',
  '/subscribe/{id}',
  '/subscribe/confirm/{token}',
  '/app',
  '/session/sign-in',
  '/session/accept-invite',
  '/session/forgot',
  '/session/reset',
];
/** Routes of the signed-in person themselves: a session, never keys. */
const SESSION_ONLY = ['/session', '/session/sign-out', '/me/2fa/setup', '/me/2fa/enable', '/me/2fa/disable', '/me/password'];
const FORM_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data', 'application/json'];

/**
 * Every route of the app as `METHOD /path`, read from Fastify's own route tree (buildApp adds the
 * routes itself, so a test cannot hook in before them). HEAD twins of GET routes are left out.
 */
function registeredRoutes(tree: string): string[] {
  const out: string[] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^([│ ]*)[├└]── (.+?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1].length / 4;
    stack.length = depth;
    const path = (depth ? stack[depth - 1] : '') + m[2];
    stack.push(path);
    for (const method of (m[3] ?? '').split(', ').filter((x) => x && x !== 'HEAD'))
      out.push(`${method} ${path.replace(/:(\w+)/g, '{$1}')}`);
  }
  return out;
}

describe('the OpenAPI document', () => {
  let t: TestContext;
  let doc: any;
  before(async () => {
    t = await setup();
    const r = await t.anon.get('/openapi.json');
    assert.equal(r.status, 200);
    doc = r.body;
  });
  after(() => t.close());

  it('is a valid OpenAPI 3.1 document', async () => {
    assert.equal(doc.openapi, '3.1.0');
    const result = await new Validator().validate(doc);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1));
  });

  it('documents every registered route with its method, and nothing else', () => {
    const routes = registeredRoutes(t.app.printRoutes({ commonPrefix: false }))
      // Swagger UI's scripts, styles and its copies of the document, and the console's pages and
      // files below /app/, are not API operations.
      .filter((r) => !/ \/(docs|app)./.test(r));
    assert.ok(routes.length > 50, `only ${routes.length} routes found`);
    const documented = Object.entries(doc.paths as Record<string, object>).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    assert.deepEqual([...documented].sort(), [...routes].sort());
  });

  it('names the key headers and the session cookie as security schemes, required everywhere but on public routes', () => {
    assert.deepEqual(doc.components.securitySchemes.PublicKey, {
      type: 'apiKey',
      in: 'header',
      name: 'PublicKey',
      description: doc.components.securitySchemes.PublicKey.description,
    });
    assert.equal(doc.components.securitySchemes.SecretKey.name, 'SecretKey');
    assert.equal(doc.components.securitySchemes.Session.in, 'cookie');
    assert.equal(doc.components.securitySchemes.Session.name, 'campaign_session');
    assert.deepEqual(doc.security, [{ PublicKey: [], SecretKey: [] }, { Bearer: [] }, { Session: [] }]);
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(ops)) {
        if (PUBLIC.includes(path)) assert.deepEqual(op.security, [], `${method} ${path}`);
        else if (SESSION_ONLY.includes(path)) assert.deepEqual(op.security, [{ Session: [] }], `${method} ${path}`);
        else assert.equal(op.security, undefined, `${method} ${path} must inherit the key requirement`);
      }
    }
  });

  it('gives every operation a tag and a summary', () => {
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(ops)) {
        assert.equal(op.tags?.length, 1, `${method} ${path}: tags`);
        assert.ok(op.summary, `${method} ${path}: summary`);
        // A redirect (the click route) documents its 302 instead of a success body; SendGrid's
        // routes answer 201 (create) and 204 (delete, no body).
        const success = op.responses['200']?.content ?? op.responses['201']?.content ?? op.responses['204'] ?? op.responses['302'];
        assert.ok(success, `${method} ${path}: success body`);
      }
    }
  });

  it('documents form bodies in their three media types, and the CSV upload as a multipart file', () => {
    const add = doc.paths['/contacts/add'].post.requestBody.content;
    assert.deepEqual(Object.keys(add), FORM_TYPES);
    assert.ok(add['application/x-www-form-urlencoded'].schema.properties.custom_field);
    assert.deepEqual(add['multipart/form-data'].schema.required, ['contact_type_id', 'email', 'country']);
    const upload = doc.paths['/contacts/upload-csv'].post.requestBody.content;
    assert.deepEqual(Object.keys(upload), ['multipart/form-data']);
    assert.deepEqual(upload['multipart/form-data'].schema.properties.file, {
      type: 'string',
      format: 'binary',
      description: upload['multipart/form-data'].schema.properties.file.description,
    });
    assert.equal(upload['multipart/form-data'].schema.properties.contact_type_id.type, 'integer');
  });

  it('documents query fields, failures with descriptions, and non-JSON media types', () => {
    const details = doc.paths['/contacts/details'].get;
    assert.deepEqual(
      details.parameters.map((p: any) => [p.in, p.name]),
      [['query', 'contact_id']],
    );
    for (const code of ['400', '401', '404', '413', '415', '422', '429', '500']) {
      assert.ok(details.responses[code].description.length > 10, code);
      assert.equal(details.responses[code].content['application/json'].schema.properties.status.enum[0], 'failed');
    }
    assert.ok(doc.paths['/contacts/csv-sample/download'].get.responses['200'].content['text/csv']);
    assert.ok(doc.paths['/images/templates/{file}'].get.responses['200'].content['image/png']);
    assert.ok(doc.paths['/sender/verify'].get.responses['200'].content['text/html']);
    assert.equal(doc.paths['/get/country-state-city'].get.responses['304'].content, undefined);
  });

  it('is served without keys and outside the rate limit', async () => {
    const limited = await setup({ rateLimitPerMinute: 1 });
    try {
      for (let i = 0; i < 3; i++) {
        const r = await limited.anon.get('/openapi.json');
        assert.equal(r.status, 200);
        assert.equal(r.headers['ratelimit-limit'], undefined);
      }
      assert.equal((await limited.anon.get('/docs')).status, 200);
    } finally {
      await limited.close();
    }
  });
});

describe('the reference page at /docs', () => {
  let t: TestContext;
  before(async () => {
    t = await setup();
  });
  after(() => t.close());

  it('is HTML that loads only assets of this server, which it serves', async () => {
    const page = await t.anon.get('/docs');
    assert.equal(page.status, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    const refs = [...page.text.matchAll(/(?:href|src)="([^"]+)"/g)].map((m) => m[1]);
    assert.ok(refs.length >= 4, refs.join());
    for (const ref of refs) assert.match(ref, /^\/docs\/static\/[\w.-]+$/, ref);
    const bundle = await t.anon.get(refs.find((r) => r.endsWith('swagger-ui-bundle.js'))!);
    assert.equal(bundle.status, 200);
    assert.match(String(bundle.headers['content-type']), /javascript/);
    assert.ok(bundle.text.length > 100_000);
    const init = await t.anon.get('/docs/static/swagger-initializer.js');
    assert.equal(init.status, 200);
    const code = init.text.replace(/\/\/ .*$/gm, ''); // its comments cite web pages; its code fetches none
    assert.doesNotMatch(code, /https?:\/\//, 'the initializer loads nothing from elsewhere');
    assert.match(code, /validatorUrl: null/);
  });

  it('sends a Content-Security-Policy and the other security headers on the page, its assets and its document', async () => {
    for (const path of ['/docs', '/docs/', '/docs/static/swagger-ui-bundle.js', '/docs/static/swagger-ui.css', '/docs/json']) {
      const r = await t.anon.get(path);
      assert.equal(r.status, 200, path);
      const csp = String(r.headers['content-security-policy']);
      const directives = new Map(csp.split(/;\s*/).map((d) => [d.split(' ')[0], d.split(' ').slice(1).join(' ')]));
      assert.equal(directives.get('default-src'), "'none'", `${path}: ${csp}`);
      assert.equal(directives.get('script-src'), "'self'", `${path}: no inline script, no eval, no other origin`);
      // Its files, and the one style element of Swagger UI's logo by its hash: no 'unsafe-inline'.
      assert.match(directives.get('style-src')!, /^'self' 'sha256-[A-Za-z0-9+/]+=*'$/, path);
      assert.equal(directives.get('connect-src'), "'self'", path);
      assert.equal(directives.get('frame-ancestors'), "'none'", path);
      assert.equal(r.headers['x-frame-options'], 'DENY', path);
      assert.equal(r.headers['x-content-type-options'], 'nosniff', path);
      assert.equal(r.headers['referrer-policy'], 'no-referrer', path);
    }
  });

  it('has no inline script or style for the policy to block', async () => {
    const page = await t.anon.get('/docs');
    assert.doesNotMatch(page.text, /<script(?![^>]*\ssrc=)[^>]*>/, 'every script element loads a file');
    assert.doesNotMatch(page.text, /<style|\sstyle=|\son[a-z]+=/i, 'no style element, style attribute or event handler');
  });
});

describe('the response check of the test helpers', () => {
  const doc: OpenApiDocument = {
    openapi: '3.1.0',
    paths: {
      '/things/{id}': {
        get: {
          responses: {
            200: {
              description: 'ok',
              content: { 'application/json': { schema: { type: 'object', required: ['id'], properties: { id: { type: 'integer' } } } } },
            },
            304: { description: 'not modified' },
          },
        },
      },
      '/things/file': { get: { responses: { 200: { description: 'csv', content: { 'text/csv': {} } } } } },
    },
  };
  const check = new OpenApiCheck(doc);
  const json = (status: number, body: string, type = 'application/json; charset=utf-8') => ({
    status,
    headers: { 'content-type': type },
    rawPayload: Buffer.from(body),
  });

  it('accepts what the document says, on the template path and the static one', () => {
    check.check('GET', '/things/7?x=1', json(200, '{"id":7}'));
    check.check('GET', '/things/7', { status: 304, headers: {}, rawPayload: Buffer.alloc(0) });
    check.check('GET', '/things/file', json(200, 'a,b', 'text/csv; charset=utf-8'));
    check.check('GET', '/elsewhere', json(404, '{"status":"failed"}'));
  });

  it('fails an undocumented status, a wrong or extra field, an undocumented media type, a body where none is documented', () => {
    assert.throws(() => check.check('GET', '/things/7', json(418, '{}')), /status not documented/);
    assert.throws(() => check.check('GET', '/things/7', json(200, '{"id":"7"}')), /does not match/);
    assert.throws(() => check.check('GET', '/things/7', json(200, '{"id":7,"secret":1}')), /does not match/);
    assert.throws(() => check.check('GET', '/things/file', json(200, '{}')), /content type application\/json not documented/);
    assert.throws(() => check.check('GET', '/things/7', json(304, '{}')), /without a body/);
  });
});
