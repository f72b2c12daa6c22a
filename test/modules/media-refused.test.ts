import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import { fieldErrors, setup, type TestContext } from '../helpers.js';
import { multipart } from './contacts-csv.helpers.js';
import { animation, pngClaiming, stillImage, uploadImage, zipHolding } from './media.helpers.js';

const TYPE = fieldErrors({ file: ['The file must be an image of type: png, jpeg, gif, webp.'] });
const DAMAGED = fieldErrors({ file: ['The file is not a complete image: it is damaged or cut short.'] });
const REQUIRED = fieldErrors({ file: ['The file field is required.'] });

describe('media uploads refused', () => {
  let t: TestContext;
  let tmpBefore: string[];
  before(async () => {
    t = await setup({ maxMediaBytes: 1024 * 1024 });
    tmpBefore = readdirSync(tmpdir());
  });
  after(async () => {
    // Nothing was written outside the database: the temporary folder holds no new file of ours.
    const added = readdirSync(tmpdir()).filter((f) => !tmpBefore.includes(f) && /campaign|media|sharp|vips/i.test(f));
    assert.deepEqual(added, []);
    await t.close();
  });

  const refused = async (content: Buffer | string, expected: object, name = 'x.png') => {
    const r = await uploadImage(t.a, content, name);
    assert.equal(r.status, 422, r.text);
    assert.deepEqual(r.body, expected);
  };

  it('refuses SVG, with a script inside or not, whatever its name', async () => {
    const svg =
      '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script><rect width="10" height="10"/></svg>';
    await refused(svg, TYPE, 'logo.svg');
    await refused(svg, TYPE, 'logo.png');
    await refused('<?xml version="1.0"?>' + svg, TYPE, 'logo.png');
  });

  it('refuses other formats and plain text, recognised by content not name', async () => {
    await refused(
      await sharp({ create: { width: 8, height: 8, channels: 3, background: '#000' } })
        .tiff()
        .toBuffer(),
      TYPE,
      'a.png',
    );
    await refused('%PDF-1.4\n1 0 obj\n', TYPE, 'a.jpg');
    await refused('<html><script>alert(1)</script></html>', TYPE, 'a.gif');
    await refused(zipHolding('a.txt', 'hello'), TYPE, 'a.webp');
  });

  it('refuses a PNG whose header claims 100,000 × 100,000 pixels before decoding it', async () => {
    const started = Date.now();
    await refused(
      pngClaiming(100_000, 100_000),
      fieldErrors({ file: ['The file has invalid image dimensions: at most 8000 × 8000 pixels.'] }),
    );
    await refused(pngClaiming(8001, 10), fieldErrors({ file: ['The file has invalid image dimensions: at most 8000 × 8000 pixels.'] }));
    assert.ok(Date.now() - started < 5000, 'answered without decoding');
  });

  it('refuses truncated and corrupt files', async () => {
    const png = await stillImage('png', 300, 300);
    await refused(png.subarray(0, Math.floor(png.length / 2)), DAMAGED);
    await refused(png.subarray(0, 20), DAMAGED);
    const jpeg = await sharp(Buffer.from(Array.from({ length: 200 * 200 * 3 }, (_, i) => (i * 31) % 256)), {
      raw: { width: 200, height: 200, channels: 3 },
    })
      .jpeg()
      .toBuffer();
    await refused(jpeg.subarray(0, Math.floor(jpeg.length / 2)), DAMAGED, 'x.jpg');
    const corrupt = Buffer.from(jpeg);
    for (let i = 200; i < corrupt.length - 10; i += 7) corrupt[i] = 0xff;
    await refused(corrupt, DAMAGED, 'x.jpg');
    const gif = await stillImage('gif', 50, 50);
    await refused(gif.subarray(0, 30), DAMAGED, 'x.gif');
  });

  it('cleans a polyglot: an image that is also a ZIP or HTML is stored as the image alone', async () => {
    const png = await stillImage('png', 40, 40);
    const gif = await stillImage('gif', 40, 40);
    for (const [content, secret] of [
      [Buffer.concat([png, zipHolding('secret.txt', 'zip secret')]), 'zip secret'],
      [Buffer.concat([gif, Buffer.from('<html><script>alert("polyglot")</script></html>')]), '<script'],
    ] as const) {
      const r = await uploadImage(t.a, content, 'poly.png');
      assert.equal(r.status, 200, r.text);
      const served = await t.app.inject({ method: 'GET', url: new URL(r.body.message.media.url).pathname });
      assert.equal(served.statusCode, 200);
      assert.ok(!served.rawPayload.includes(secret), 'the appended bytes are gone');
      assert.ok(!served.rawPayload.includes('PK\x03\x04'));
      assert.equal(served.headers['x-content-type-options'], 'nosniff');
      assert.match(String(served.headers['content-security-policy']), /sandbox/);
    }
  });

  it('stores a safe name: no folders, no control characters, the real extension', async () => {
    const png = await stillImage('png', 10, 10);
    for (const [sent, stored] of [
      ['../../x.png', 'x.png'],
      ['..\\..\\windows\\x.png', 'x.png'],
      ['a\u0000b\u0007c\u001bd\te.png', 'a-b-c-d-e.png'],
      ['...', 'image.png'],
      ['photo.gif', 'photo.png'],
      ['résumé 2024!.png', 'r-sum-2024.png'],
    ]) {
      const r = await uploadImage(t.a, png, sent);
      assert.equal(r.status, 200, `${JSON.stringify(sent)}: ${r.text}`);
      assert.equal(r.body.message.media.filename, stored, JSON.stringify(sent));
      assert.ok(r.body.message.media.url.endsWith(`/${stored}`));
    }
  });

  it('requires a file: none, an empty one, or a body that is not multipart', async () => {
    await refused(Buffer.alloc(0), REQUIRED);
    const none = await t.a.request('POST', '/media/upload', multipart({ other: 'x' }));
    assert.deepEqual(none.body, REQUIRED);
    const form = await t.a.post('/media/upload', { file: 'x' });
    assert.equal(form.status, 422);
    assert.deepEqual(form.body, REQUIRED);
  });

  it('refuses a file over the limit (422), and a body announced over twice the limit before reading it (413)', async () => {
    const big = Buffer.alloc(1024 * 1024 + 10, 1);
    await refused(big, fieldErrors({ file: ['The file must not be greater than 1024 kilobytes.'] }));
    // 50 MB announced: refused on its Content-Length.
    const huge = multipart({}, { content: Buffer.alloc(50 * 1024 * 1024, 1), name: 'huge.png' });
    const r = await t.app.inject({
      method: 'POST',
      url: '/media/upload',
      payload: huge.payload,
      headers: { ...huge.headers, ...keysOf(t) },
    });
    assert.equal(r.statusCode, 413);
    assert.deepEqual(r.json(), { status: 'failed', errors: 'The request body is too large.' });
    // Streamed without a length: cut at the limit.
    const streamed = multipart({}, { content: Buffer.alloc(5 * 1024 * 1024, 1), name: 'streamed.png' });
    const s = await t.app.inject({
      method: 'POST',
      url: '/media/upload',
      payload: Readable.from([streamed.payload]),
      headers: { ...streamed.headers, ...keysOf(t) },
    });
    assert.equal(s.statusCode, 422);
    assert.deepEqual(s.json(), fieldErrors({ file: ['The file must not be greater than 1024 kilobytes.'] }));
  });

  it('refuses an animation of more than 100 frames', async () => {
    await refused(await animation(200), fieldErrors({ file: ['The file must not have more than 100 frames.'] }), 'long.gif');
    const ok = await uploadImage(t.a, await animation(100), 'hundred.gif');
    assert.equal(ok.status, 200, ok.text);
  });

  it('stores nothing for a refused upload', async () => {
    const before = (await t.a.get('/media')).body.message.media.length;
    await refused(
      pngClaiming(100_000, 100_000),
      fieldErrors({ file: ['The file has invalid image dimensions: at most 8000 × 8000 pixels.'] }),
    );
    assert.equal((await t.a.get('/media')).body.message.media.length, before);
  });
});

function keysOf(t: TestContext): Record<string, string> {
  return { publickey: t.a.keys!.public_key, secretkey: t.a.keys!.secret_key };
}
