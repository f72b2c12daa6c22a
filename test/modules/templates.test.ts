import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setup, type TestContext, assertNeedsKeys } from '../helpers.js';
import { compileMjml } from '../../src/delivery/mjml.js';

const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const FIELDS = ['id', 'template_name', 'preview_image', 'json_code', 'html_code', 'is_blank', 'created_at', 'updated_at'];
const CONTENTS = [
  'first_name',
  'last_name',
  'email',
  'alt_email',
  'country',
  'state',
  'city',
  'address_line1',
  'address_line2',
  'state_province_region',
  'postal_code',
  'full_name',
  'father_name',
  'designation',
  'age',
  'company_name',
  'birth_date',
  'join_date',
  'sender_name',
  'sender_address',
  'unsubscribe_preferences',
];
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describe('design templates and dynamic content', () => {
  let t: TestContext;
  let templates: any[];
  before(async () => {
    t = await setup();
    templates = (await t.a.get('/get-design/template')).body.message.templates;
  });
  after(() => t.close());

  it('lists the shipped templates with exactly their documented fields, ordered by id', async () => {
    const r = await t.a.get('/get-design/template');
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^application\/json; charset=utf-8/);
    assert.deepEqual(Object.keys(r.body), ['status', 'message']);
    assert.equal(r.body.status, 'success');
    assert.deepEqual(Object.keys(r.body.message), ['templates']);
    assert.ok(templates.length >= 5);
    for (const tpl of templates) {
      assert.deepEqual(Object.keys(tpl), FIELDS);
      assert.ok(Number.isInteger(tpl.id));
      assert.equal(typeof tpl.template_name, 'string');
      assert.match(tpl.preview_image, /^[a-z0-9-]+\.png$/);
      assert.equal(typeof tpl.json_code, 'string');
      assert.equal(typeof tpl.html_code, 'string');
      assert.ok(tpl.created_at === null || TS.test(tpl.created_at));
      assert.ok(tpl.updated_at === null || TS.test(tpl.updated_at));
    }
    const ids = templates.map((x) => x.id);
    assert.deepEqual(
      ids,
      [...ids].sort((x, y) => x - y),
    );
    assert.equal(new Set(ids).size, ids.length);
  });

  it('has the blank template as id 1 and only there', () => {
    assert.equal(templates[0].id, 1);
    assert.equal(templates[0].is_blank, 1);
    for (const tpl of templates.slice(1)) assert.equal(tpl.is_blank, 0);
  });

  it('ships a newsletter, an announcement, a welcome and a receipt design', () => {
    const names = templates.map((x) => x.template_name.toLowerCase()).join(' ');
    for (const kind of ['newsletter', 'announcement', 'welcome', 'receipt']) assert.ok(names.includes(kind), kind);
  });

  it('compiles html_code from json_code, an MJML document in JSON form', async () => {
    for (const tpl of templates) {
      const doc = JSON.parse(tpl.json_code);
      assert.equal(doc.tagName, 'mjml');
      assert.ok(doc.children.some((c: any) => c.tagName === 'mj-body'));
      assert.equal(await compileMjml(doc), tpl.html_code, tpl.template_name);
      assert.match(tpl.html_code, /^<!doctype html>/i);
    }
  });

  it('puts the sender address and the unsubscribe link in every real design', () => {
    for (const tpl of templates.filter((x) => x.is_blank === 0)) {
      assert.ok(tpl.html_code.includes('((sender_address))'), tpl.template_name);
      assert.ok(tpl.html_code.includes('href="((unsubscribe_preferences))"'), tpl.template_name);
      assert.ok(tpl.html_code.includes('((first_name))') || tpl.html_code.includes('((full_name))'), tpl.template_name);
      // Responsive: MJML's mobile media query is there.
      assert.match(tpl.html_code, /@media only screen and \(min-width:480px\)/);
    }
  });

  it('gives every account the same templates', async () => {
    const other = await t.b.get('/get-design/template');
    assert.deepEqual(other.body.message.templates, templates);
  });

  it('answers a repeated request with 304 when the ETag matches', async () => {
    const first = await t.a.get('/get-design/template');
    const etag = String(first.headers.etag);
    assert.ok(etag.length > 2);
    const again = await t.a.request('GET', '/get-design/template', { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
  });

  it('lists the 21 dynamic content names in their fixed order', async () => {
    const r = await t.a.get('/get-dynamic/content');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { status: 'success', message: { contents: CONTENTS } });
  });

  it('ignores unknown query parameters', async () => {
    const r = await t.a.get('/get-dynamic/content', { page: 'x', foo: 'bar' });
    assert.deepEqual(r.body.message.contents, CONTENTS);
    const l = await t.a.get('/get-design/template', { id: '1' });
    assert.equal(l.body.message.templates.length, templates.length);
  });

  for (const path of ['/get-design/template', '/get-dynamic/content']) {
    it(`requires the key headers on ${path}`, async () => {
      await assertNeedsKeys(t.anon, [['GET', path]]);
      const wrong = await t.anon.request('GET', path, { headers: { publickey: t.a.keys!.public_key, secretkey: 'sk_wrong' } });
      assert.equal(wrong.status, 401);
      assert.deepEqual(wrong.body, { status: 'failed', errors: 'Invalid API credentials' });
    });
  }
});

describe('template preview images', () => {
  let t: TestContext;
  let templates: any[];
  before(async () => {
    t = await setup();
    templates = (await t.a.get('/get-design/template')).body.message.templates;
  });
  after(() => t.close());

  it('serves every preview_image as a real PNG, without keys, cacheable', async () => {
    for (const tpl of templates) {
      const r = await t.app.inject({ method: 'GET', url: `/images/templates/${tpl.preview_image}` });
      assert.equal(r.statusCode, 200, tpl.preview_image);
      assert.equal(r.headers['content-type'], 'image/png');
      assert.ok(r.rawPayload.subarray(0, 8).equals(PNG_MAGIC), `${tpl.preview_image} is a PNG`);
      assert.ok(r.rawPayload.length > 1000 && r.rawPayload.length < 200 * 1024, `${tpl.preview_image}: ${r.rawPayload.length} bytes`);
      assert.match(String(r.headers['cache-control']), /public, max-age=\d+/);
      assert.equal(r.headers['x-content-type-options'], 'nosniff');
      const again = await t.app.inject({
        method: 'GET',
        url: `/images/templates/${tpl.preview_image}`,
        headers: { 'if-none-match': String(r.headers.etag) },
      });
      assert.equal(again.statusCode, 304);
    }
  });

  it('answers HEAD like GET without a body', async () => {
    const r = await t.app.inject({ method: 'HEAD', url: `/images/templates/${templates[1].preview_image}` });
    assert.equal(r.statusCode, 200);
    assert.equal(r.headers['content-type'], 'image/png');
    assert.equal(r.rawPayload.length, 0);
  });

  it('refuses path traversal and anything but the shipped PNGs with 404', async () => {
    const attempts = [
      '/images/templates/..%2F..%2Fpackage.json',
      '/images/templates/..%2f..%2fpackage.json',
      '/images/templates/%2e%2e%2f%2e%2e%2fpackage.json',
      '/images/templates/../../package.json',
      '/images/templates/..%5C..%5Cpackage.json',
      '/images/templates/%2Fetc%2Fpasswd',
      '/images/templates/blank.json',
      '/images/templates/missing.png',
      '/images/templates/blank.png%00.json',
      '/images/templates/.png',
      '/images/templates/',
      '/images/templates/BLANK.PNG',
    ];
    for (const url of attempts) {
      const r = await t.app.inject({ method: 'GET', url });
      assert.equal(r.statusCode, 404, url);
      assert.deepEqual(r.json(), { status: 'failed', errors: 'Route not found' }, url);
      assert.ok(!r.body.includes('"name"'), url);
    }
  });
});
