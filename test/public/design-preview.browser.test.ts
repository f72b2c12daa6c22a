/**
 * The design preview page in a real browser: Debian's chromium, driven by playwright-core, against
 * the app listening on a real port. The email shows in its frame, styled, and none of its scripts
 * run. Skipped (with the reason) only where /usr/bin/chromium is missing; `.ci/run` installs it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';
import { setup, type TestContext } from '../helpers.js';
import { seedAutomationEmail } from './seed.js';

const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM)
  ? false
  : `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium) to run the browser test`;
const SCREENSHOT = '/tmp/design-preview-phone.png';

/** Every way a script in the design could show it ran: a title, an attribute, a dialog, a console line. */
const HOSTILE =
  '<!doctype html><html><head><title></title><style>.lead{color:rgb(10, 20, 30)}</style></head>' +
  "<body onload=\"document.body.setAttribute('data-ran', 'onload')\">" +
  '<p class="lead" style="font-size:20px">Hello ((first_name)), welcome to the spring catalogue.</p>' +
  '<script>document.title = "pwned"; document.body.setAttribute("data-ran", "script"); console.log("design script ran");' +
  'alert("design script ran"); try { parent.document.title = "pwned"; } catch (e) { console.log("design script ran: " + e); }</script>' +
  '<img src="data:," alt="" onerror="console.log(\'design script ran: onerror\')">' +
  '</body></html>';

/** What chromium itself reports about a sandboxed frame's blocked scripts; nothing else may appear. */
const BLOCKED = /^Blocked script execution in 'about:srcdoc' because the document's frame is sandboxed/;

describe('the design preview page in chromium', { skip }, () => {
  let t: TestContext;
  let browser: Browser;
  let url: string;

  before(async () => {
    t = await setup();
    const utr = await seedAutomationEmail(t.database.db, t.a.keys!.user_id, { subject: 'Spring is here', templateHtml: HOSTILE });
    url = `${await t.app.listen({ host: '127.0.0.1', port: 0 })}/designs/${utr}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  /** Opens the page, recording console lines and dialogs. */
  async function open(options: BrowserContextOptions = {}) {
    const context = await browser.newContext(options);
    const page = await context.newPage();
    const lines: string[] = [];
    const dialogs: string[] = [];
    page.on('console', (m) => lines.push(m.text()));
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    const shown = await page.goto(url);
    assert.equal(shown?.status(), 200);
    return { context, page, lines, dialogs };
  }

  const frameOf = (page: Page) => {
    const frame = page.frames().find((f) => f.url() === 'about:srcdoc');
    assert.ok(frame, 'the email frame');
    return frame;
  };

  it('shows the email, styled, in its frame, and runs none of its scripts', async () => {
    const { context, page, lines, dialogs } = await open();
    const lead = page.frameLocator('iframe[title="The email"]').getByText('Hello Alex, welcome to the spring catalogue.');
    assert.equal(await lead.isVisible(), true);
    assert.equal(await lead.evaluate((el) => getComputedStyle(el).color), 'rgb(10, 20, 30)', "the design's style block applies");
    assert.equal(await lead.evaluate((el) => getComputedStyle(el).fontSize), '20px', "the design's inline style applies");
    assert.equal(await page.getByText('Spring is here').isVisible(), true);

    assert.equal(await page.title(), 'Email preview');
    const frame = frameOf(page);
    const marks = await frame.evaluate(() => ({ title: document.title, ran: document.body.getAttribute('data-ran') }));
    assert.deepEqual(marks, { title: 'Spring is here', ran: null });
    assert.equal(await page.evaluate(() => document.body.getAttribute('data-ran')), null);
    assert.deepEqual(dialogs, []);
    assert.deepEqual(
      lines.filter((line) => !BLOCKED.test(line)),
      [],
      'no console line but chromium reporting the blocked scripts',
    );
    assert.ok(
      lines.some((line) => BLOCKED.test(line)),
      'chromium blocked the scripts (the frame is sandboxed)',
    );
    await context.close();
  });

  it('shows the email without JavaScript, readable on a phone-sized screen', async () => {
    const { context, page } = await open({
      javaScriptEnabled: false,
      viewport: { width: 360, height: 740 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
    });
    assert.equal(await page.frameLocator('iframe[title="The email"]').getByText('Hello Alex').isVisible(), true);
    const width = await page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      client: document.documentElement.clientWidth,
    }));
    assert.ok(width.scroll <= width.client, `page wider than the screen: ${width.scroll} > ${width.client}`);
    const box = await page.locator('iframe').boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= 360 && box.height >= 300, `frame box ${JSON.stringify(box)}`);
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    await context.close();
  });
});
