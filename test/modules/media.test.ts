import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { assertNeedsKeys, fieldErrors, setup, type TestContext } from '../helpers.js';
import { keyClient, keyRefused } from './access/keys.helpers.js';
import { animation, phonePhoto, stillImage, uploadImage } from './media.helpers.js';

const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const URL_OF = /^http:\/\/localhost:3000\/media\/([0-9a-f]{24})\/(thumb\/)?[A-Za-z0-9._-]+$/;
const Rnf = { status: 'failed', errors: 'Record not found' };

/** The path of a public URL, for `inject`. */
const pathOf = (url: string) => new URL(url).pathname;

describe('media library', () => {
  let t: TestContext;
  before(async () => {
    t = await setup();
  });
  after(() => t.close());

  const upload = async (content: Buffer, name = 'photo.png') => {
    const r = await uploadImage(t.a, content, name);
    assert.equal(r.status, 200, r.text);
    return r.body.message.media;
  };
  const fetchPublic = (url: string, headers: Record<string, string> = {}) => t.anon.request('GET', pathOf(url), { headers });

  it('needs the keys on every keyed route', async () => {
    await assertNeedsKeys(t.anon, [
      ['GET', '/media'],
      ['GET', '/media/details?id=1'],
      ['POST', '/media/upload'],
      ['DELETE', '/media/delete?id=1'],
    ]);
  });

  it('stores an upload and answers it whole', async () => {
    const png = await stillImage('png', 640, 480);
    const r = await uploadImage(t.a, png, 'Summer sale.png');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.body), ['status', 'message']);
    const m = r.body.message.media;
    assert.deepEqual(Object.keys(m), ['id', 'filename', 'content_type', 'size', 'width', 'height', 'url', 'thumb_url', 'created_at']);
    assert.equal(m.filename, 'Summer-sale.png');
    assert.equal(m.content_type, 'image/png');
    assert.equal(m.width, 640);
    assert.equal(m.height, 480);
    assert.ok(m.size > 0);
    assert.match(m.url, URL_OF);
    assert.match(m.thumb_url, URL_OF);
    assert.equal(URL_OF.exec(m.url)![1], URL_OF.exec(m.thumb_url)![1]);
    assert.match(m.created_at, TS);
  });

  it('serves the image publicly with long-lived cache headers, and answers 304 to its ETag', async () => {
    const m = await upload(await stillImage('jpeg', 500, 400), 'a.jpg');
    for (const round of [1, 2]) {
      // The second round comes from the in-process cache: the same answer.
      const r = await t.anon.app.inject({ method: 'GET', url: pathOf(m.url) });
      assert.equal(r.statusCode, 200, `round ${round}`);
      assert.equal(r.headers['content-type'], 'image/jpeg');
      assert.equal(r.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.equal(r.headers['x-content-type-options'], 'nosniff');
      assert.match(String(r.headers.etag), /^"[A-Za-z0-9_-]+"$/);
      assert.equal(r.rawPayload.length, m.size);
      const meta = await sharp(r.rawPayload).metadata();
      assert.equal(meta.format, 'jpeg');
      const again = await fetchPublic(m.url, { 'if-none-match': String(r.headers.etag) });
      assert.equal(again.status, 304);
      assert.equal(again.text, '');
      const other = await fetchPublic(m.url, { 'if-none-match': '"something-else"' });
      assert.equal(other.status, 200);
    }
  });

  it('makes a thumbnail at most 200 px wide, in proportion, with its own ETag', async () => {
    const m = await upload(await stillImage('png', 1000, 500));
    const r = await t.app.inject({ method: 'GET', url: pathOf(m.thumb_url) });
    assert.equal(r.statusCode, 200);
    assert.equal(r.headers['content-type'], 'image/png');
    const meta = await sharp(r.rawPayload).metadata();
    assert.equal(meta.width, 200);
    assert.equal(meta.height, 100);
    const full = await t.app.inject({ method: 'GET', url: pathOf(m.url) });
    assert.notEqual(r.headers.etag, full.headers.etag);
    // A small image is not enlarged.
    const small = await upload(await stillImage('webp', 120, 80), 'small.webp');
    const thumb = await t.app.inject({ method: 'GET', url: pathOf(small.thumb_url) });
    assert.equal((await sharp(thumb.rawPayload).metadata()).width, 120);
  });

  it('removes EXIF (GPS, camera, description) and applies the orientation', async () => {
    const photo = await phonePhoto();
    const before = await sharp(photo).metadata();
    assert.ok(before.exif, 'the test photo carries EXIF');
    assert.equal(before.orientation, 6);
    assert.ok(photo.includes('SecretCam'));
    const m = await upload(photo, 'IMG_0001.JPG');
    assert.equal(m.content_type, 'image/jpeg');
    assert.equal(m.filename, 'IMG_0001.jpg');
    assert.deepEqual([m.width, m.height], [100, 300]);
    const r = await t.app.inject({ method: 'GET', url: pathOf(m.url) });
    const meta = await sharp(r.rawPayload).metadata();
    assert.equal(meta.exif, undefined);
    assert.equal(meta.orientation, undefined);
    assert.deepEqual([meta.width, meta.height], [100, 300]);
    for (const secret of ['SecretCam', 'Taken at home', 'Exif', 'GPS']) assert.ok(!r.rawPayload.includes(secret), secret);
  });

  it('keeps an animation (frames and format); its thumbnail is the first frame', async () => {
    for (const format of ['gif', 'webp'] as const) {
      const m = await upload(await animation(5, format), `spin.${format}`);
      assert.equal(m.content_type, `image/${format}`);
      assert.deepEqual([m.width, m.height], [16, 16]);
      const r = await t.app.inject({ method: 'GET', url: pathOf(m.url) });
      const meta = await sharp(r.rawPayload, { animated: true }).metadata();
      assert.equal(meta.pages, 5, format);
      const thumb = await t.app.inject({ method: 'GET', url: pathOf(m.thumb_url) });
      assert.equal((await sharp(thumb.rawPayload).metadata()).pages ?? 1, 1);
    }
  });

  it('lists the account’s images newest first, paged on request, without another account’s', async () => {
    const first = await upload(await stillImage('png', 10, 10), 'first.png');
    const second = await upload(await stillImage('png', 10, 10), 'second.png');
    const r = await t.a.get('/media');
    assert.equal(r.status, 200, r.text);
    const ids = r.body.message.media.map((m: { id: number }) => m.id);
    assert.deepEqual(ids.slice(0, 2), [second.id, first.id]);
    assert.deepEqual(r.body.message.media[0], second);
    const page = await t.a.get('/media', { page: 1, per_page: 1 });
    assert.equal(page.status, 200);
    assert.deepEqual(page.body.message, { media: [second], meta: { page: 1, per_page: 1, total: ids.length } });
    assert.deepEqual((await t.b.get('/media')).body, { status: 'success', message: { media: [] } });
  });

  it('answers another account’s or an unknown id with Record not found, and checks the id', async () => {
    const m = await upload(await stillImage('png', 10, 10));
    assert.deepEqual((await t.b.get('/media/details', { id: m.id })).body, Rnf);
    assert.equal((await t.b.get('/media/details', { id: m.id })).status, 404);
    assert.deepEqual((await t.b.delete('/media/delete', { id: m.id })).body, Rnf);
    assert.deepEqual((await t.a.get('/media/details', { id: 999999 })).body, Rnf);
    // Query ids are read as the designs' are: missing or malformed is not found.
    assert.deepEqual((await t.a.get('/media/details', { id: 'x' })).body, Rnf);
    assert.deepEqual((await t.a.get('/media/details')).body, Rnf);
    // Still there for its owner.
    assert.equal((await t.a.get('/media/details', { id: m.id })).status, 200);
  });

  it('deletes an unused image; its URLs then answer 404', async () => {
    const m = await upload(await stillImage('png', 10, 10));
    assert.equal((await fetchPublic(m.url)).status, 200);
    assert.equal((await fetchPublic(m.thumb_url)).status, 200);
    const r = await t.a.delete('/media/delete', { id: m.id });
    assert.deepEqual(r.body, { status: 'success', message: 'Deleted Successfully' });
    for (const url of [m.url, m.thumb_url]) {
      const gone = await fetchPublic(url);
      assert.equal(gone.status, 404);
      assert.deepEqual(gone.body, { status: 'failed', errors: 'Route not found' });
    }
    assert.deepEqual((await t.a.get('/media/details', { id: m.id })).body, Rnf);
  });

  it('answers 404 for a made-up token', async () => {
    assert.equal((await t.anon.get('/media/0123456789abcdef01234567/x.png')).status, 404);
    assert.equal((await t.anon.get('/media/not-a-token/x.png')).status, 404);
  });

  it('gives the upload to designs.write and the reads to designs.read', async () => {
    const reader = await keyClient(t.a, ['designs.read'], 'reader');
    const png = await stillImage('png', 10, 10);
    const refused = await uploadImage(reader, png);
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.body, keyRefused('designs.write'));
    const m = await upload(png);
    assert.equal((await reader.get('/media')).status, 200);
    assert.equal((await reader.get('/media/details', { id: m.id })).status, 200);
    assert.deepEqual((await reader.delete('/media/delete', { id: m.id })).body, keyRefused('designs.write'));
    const contacts = await keyClient(t.a, ['contacts.write'], 'contacts only');
    assert.deepEqual((await contacts.get('/media')).body, keyRefused('designs.read'));
    const writer = await keyClient(t.a, ['designs.write'], 'writer');
    assert.equal((await uploadImage(writer, png)).status, 200);
  });
});

describe('media quota', () => {
  let t: TestContext;
  before(async () => {
    t = await setup({ mediaQuotaBytes: 60 * 1024 });
  });
  after(() => t.close());

  it('refuses an upload that would take the account past its quota; other accounts are apart', async () => {
    // Noise does not compress: each image stores about 30 KB.
    const noise = (_seed: number) =>
      sharp(randomBytes(100 * 100 * 3), { raw: { width: 100, height: 100, channels: 3 } })
        .png()
        .toBuffer();
    const first = await uploadImage(t.a, await noise(1));
    assert.equal(first.status, 200, first.text);
    assert.ok(first.body.message.media.size > 20 * 1024, String(first.body.message.media.size));
    const full = await uploadImage(t.a, await noise(2));
    const second = full.status === 200 ? await uploadImage(t.a, await noise(3)) : full;
    assert.equal(second.status, 422);
    assert.deepEqual(second.body, fieldErrors({ file: ['The media library is full.'] }));
    assert.equal((await uploadImage(t.b, await noise(4))).status, 200);
    // Room again once an image is deleted.
    await t.a.delete('/media/delete', { id: first.body.message.media.id });
    assert.equal((await uploadImage(t.a, await noise(5))).status, 200);
  });
});
