/**
 * The media library in a real browser (see browser.ts for the harness): the Media page (upload,
 * the grid, details with where an image is used, a delete refused and explained, copy URL) at 1280
 * and 390 px, and the design editor's image block picking and uploading from the library; the
 * design then goes out in a single send whose `<img>` loads from the service.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { simpleParser } from 'mailparser';
import sharp from 'sharp';
import { skipWithoutChromium, startConsole, type ConsoleHarness } from './browser.js';
import { drainQueue } from '../helpers.js';
import { mjmlText } from '../support/designs.js';
import { uploadImage } from '../modules/media.helpers.js';
import { startDueSends } from '../../src/modules/single-sends/single-sends.engine.js';
import { createSend, group, sendForm, typeWith, verifiedSender } from '../modules/single-sends.helpers.js';
import type { TestClock } from '../../src/util/clock.js';

const png = (width: number, height: number, colour: string) =>
  sharp({ create: { width, height, channels: 3, background: colour } })
    .png()
    .toBuffer();

/**
 * The problems that count: here PUBLIC_URL (`http://localhost:3000`, what the image URLs start with)
 * is not the test server's origin, so the console's CSP (`img-src 'self' https:`) blocks the
 * images the canvas shows; a service's own PUBLIC_URL is the console's origin, or https.
 */
const real = (problems: string[]) => problems.filter((p) => !/Loading the image 'http:\/\/localhost:3000\/media\//.test(p));
/** The browser logs the refusals the test provokes (the SVG's 422, the delete's 409). */
const unexpected = (problems: string[]) => real(problems).filter((p) => !/status of (422|409) /.test(p));

describe('the media library in chromium', { skip: skipWithoutChromium }, () => {
  let h: ConsoleHarness;

  before(async () => {
    h = await startConsole({}, { sink: true, clock: '2030-01-15T10:00:00.000Z' });
  });
  after(async () => {
    await h?.close();
  });

  it('uploads, shows, explains a refused delete and deletes on the Media page', async () => {
    const { t } = h;
    const theirs = await uploadImage(t.b, await png(30, 30, '#f00'), 'theirs.png');
    assert.equal(theirs.status, 200);
    const { page, context, problems } = await h.open({ viewport: { width: 1280, height: 900 } });
    await h.signIn(page);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Media', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Media' }).waitFor();
    await page.getByText('No images yet.').waitFor();

    await page
      .getByLabel('Image files')
      .setInputFiles({ name: '../../Logo <b>.png', mimeType: 'image/png', buffer: await png(640, 320, '#2a7') });
    await page.getByRole('status').filter({ hasText: 'uploaded.' }).waitFor();
    await page.getByText('Logo-b.png', { exact: true }).waitFor();
    assert.equal(await page.getByText('theirs.png').count(), 0, "another account's image is not shown");
    // The thumbnail loads from the service.
    await page.waitForFunction(() => {
      const img = document.querySelector<HTMLImageElement>('.card img');
      return img?.complete && img.naturalWidth === 200;
    });
    // Refused: SVG.
    await page.getByLabel('Image files').setInputFiles({
      name: 'x.svg',
      mimeType: 'image/svg+xml',
      buffer: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
    });
    await page.getByRole('alert').filter({ hasText: 'The image file must be an image of type: png, jpeg, gif, webp.' }).waitFor();

    const image = (await t.a.get('/media')).body.message.media[0];
    const design = await t.a.post('/designs/create', { name: 'Spring letter', template_json: mjmlText(`<img src="${image.url}">`) });
    assert.equal(design.status, 200);
    await page.getByRole('button', { name: 'Details of Logo-b.png' }).click();
    await page.getByRole('heading', { level: 2, name: 'Logo-b.png' }).waitFor();
    await page.getByRole('link', { name: 'Spring letter' }).waitFor();
    assert.deepEqual(await h.axeViolations(page), [], 'axe on the page with details');
    await h.shot(page, 'media-1280');

    await page.getByRole('button', { name: 'Delete Logo-b.png' }).click();
    await page.getByRole('button', { name: 'Delete for good' }).click();
    const refusal = page.getByRole('alert');
    await refusal.filter({ hasText: 'The image is used by design "Spring letter"' }).waitFor();
    await h.shot(page, 'media-delete-refused');

    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.getByRole('button', { name: 'Copy URL' }).click();
    await page.getByText('Address copied.').waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), image.url);

    // At 390 px, the grid is one column and nothing overflows.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForTimeout(100);
    assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= 390, 'no sideways scrolling');
    assert.deepEqual(await h.axeViolations(page), [], 'axe at 390 px');
    await h.shot(page, 'media-390');

    // Once the design is gone, the delete goes through.
    await t.a.delete('/designs/delete', { id: design.body.id });
    await page.getByRole('button', { name: 'Delete Logo-b.png' }).click();
    await page.getByRole('button', { name: 'Delete for good' }).click();
    await page.getByRole('status').filter({ hasText: '“Logo-b.png” deleted.' }).waitFor();
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });

  it('the editor’s image block picks and uploads from the library; the sent mail’s image loads from the service', async () => {
    const { t } = h;
    const library = await uploadImage(t.a, await png(300, 150, '#36c'), 'banner.png');
    assert.equal(library.status, 200);
    const { page, context, problems } = await h.open({ viewport: { width: 1280, height: 900 } });
    await h.signIn(page);
    await page.goto(`${h.base}/app/designs/new?from=1`);
    await page.waitForFunction(() => {
      const b = [...document.querySelectorAll('button')].find((x) => x.textContent === 'Save design');
      return b && !b.disabled;
    });
    await page.getByLabel('Design name').fill('With a picture');

    // The Image block opens the library at once: the uploaded image is there.
    await page.getByRole('region', { name: 'Blocks' }).getByRole('button', { name: 'Image', exact: true }).click();
    const modal = page.locator('.gjs-mdl-container');
    await modal.waitFor();
    await modal.locator('.gjs-am-asset-image').first().waitFor();
    await h.shot(page, 'media-editor-library');
    // A new file uploaded from the picker goes to the library and is chosen for the block.
    await modal.locator('input[type=file]').setInputFiles({ name: 'hero.png', mimeType: 'image/png', buffer: await png(600, 200, '#c63') });
    await modal.locator('.gjs-am-asset-image', { hasText: 'hero.png' }).waitFor();
    const uploaded = (await t.a.get('/media')).body.message.media.find((m: { filename: string }) => m.filename === 'hero.png');
    assert.ok(uploaded, 'the upload is in the library');
    await modal.locator('.gjs-am-asset-image', { hasText: 'hero.png' }).dblclick();
    await modal.waitFor({ state: 'hidden' });
    await page.getByLabel('Image address').waitFor();
    assert.equal(await page.getByLabel('Image address').inputValue(), uploaded.url);

    await page.getByRole('button', { name: 'Save design' }).click();
    await page.getByRole('status').filter({ hasText: 'Design saved.' }).waitFor();
    const id = Number(/\/app\/designs\/(\d+)$/.exec(page.url())?.[1]);
    const design = (await t.a.get('/designs/details', { id })).body.message.design;
    assert.ok(design.template_json.includes(uploaded.url), 'the design names the image');
    const details = (await t.a.get('/media/details', { id: uploaded.id })).body.message.media;
    assert.deepEqual(details.used_in, [{ type: 'design', id, name: 'With a picture' }]);
    assert.deepEqual(real(problems), []);
    await context.close();

    // Sent: the mail's <img> is the library's URL, and it loads from the service.
    const clock = t.clock as TestClock;
    const { type } = await typeWith(t.a, [['reader@example.com', 'Rita']]);
    const base = { sender: await verifiedSender({ ...t, clock }, t.a), group: await group(t.a), type };
    await createSend(t.a, sendForm(base, { template_html: '', template_json: design.template_json }));
    await startDueSends(t.deps, clock.now());
    clock.advance(2000);
    await drainQueue(t);
    const [got] = t.sink!.to('reader@example.com');
    assert.ok(got, 'the mail arrived');
    const html = (await simpleParser(got.raw)).html as string;
    const src = [...html.matchAll(/<img[^>]+src="([^"]+)"/g)].map((m) => m[1]).find((s) => s.includes('/media/'));
    assert.equal(src, uploaded.url);
    const served = await fetch(h.base + new URL(src!).pathname);
    assert.equal(served.status, 200);
    assert.equal(served.headers.get('content-type'), 'image/png');
    assert.equal((await sharp(Buffer.from(await served.arrayBuffer())).metadata()).width, 600);
  });
});
