/**
 * The preferences page in a real browser: Debian's chromium, driven by playwright-core, against
 * the app listening on a real port. Skipped (with the reason) only where /usr/bin/chromium is
 * missing; `.ci/run` installs it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { trackingLinks } from '../../src/delivery/tracking.js';
import { setup, type TestContext } from '../helpers.js';
import { seedGroup, seedSingleSend, type SeededSend } from './seed.js';

const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM)
  ? false
  : `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium) to run the browser test`;
const SCREENSHOT = '/tmp/unsubscribe-page-phone.png';

describe('the preferences page in chromium', { skip }, () => {
  let t: TestContext;
  let browser: Browser;
  let base: string;
  let send: SeededSend;
  let news: number;
  let userId: number;

  before(async () => {
    t = await setup();
    userId = t.a.keys!.user_id;
    news = await seedGroup(t.database.db, userId, 'Weekly news & <tips>', 1, 'What is new, every Monday.');
    await seedGroup(t.database.db, userId, 'Product updates', 1, 'New features, a few times a year.');
    send = await seedSingleSend(t.database.db, userId, ['grace@example.com', 'linus@example.com']);
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  const lists = async (email: string) =>
    (
      await t.database.db
        .selectFrom('unsubscribers')
        .select('unsubscribe_groups_id')
        .where('user_id', '=', userId)
        .where('email_key', '=', email)
        .execute()
    ).map((r) => r.unsubscribe_groups_id ?? 'global');

  it('unsubscribes from a group by clicking its box and saving, without JavaScript', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    const violations: string[] = [];
    page.on('console', (m) => violations.push(m.text()));
    const url = base + new URL(trackingLinks(t.config).unsubscribeUrl(send.messageIds[0])).pathname;
    const shown = await page.goto(url);
    assert.equal(shown?.status(), 200);
    assert.equal(await page.title(), 'Email preferences');
    const box = page.getByLabel('Weekly news & <tips>');
    assert.equal(await box.isChecked(), false);
    await box.check();
    await Promise.all([page.waitForURL(url), page.getByRole('button', { name: 'Save preferences' }).click()]);
    assert.equal(await page.getByRole('status').textContent(), 'Your preferences are saved.');
    assert.equal(await page.getByLabel('Weekly news & <tips>').isChecked(), true);
    assert.equal(await page.getByLabel('Unsubscribe from all emails').isChecked(), false);
    assert.deepEqual(await lists('grace@example.com'), [news]);
    assert.deepEqual((await context.cookies()).length, 0);
    assert.deepEqual(violations, [], 'no CSP violation (the style block is allowed by its hash)');
    await context.close();
  });

  it('renders on a phone-sized screen: no horizontal scrolling, readable text', async () => {
    const context = await browser.newContext({
      viewport: { width: 360, height: 740 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
    });
    const page = await context.newPage();
    await page.goto(base + new URL(trackingLinks(t.config).unsubscribeUrl(send.messageIds[1])).pathname);
    const width = await page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      client: document.documentElement.clientWidth,
    }));
    assert.ok(width.scroll <= width.client, `page wider than the screen: ${width.scroll} > ${width.client}`);
    const fontSize = await page.getByText('Product updates').evaluate((el) => parseFloat(getComputedStyle(el).fontSize));
    assert.ok(fontSize >= 16, `label text ${fontSize}px`);
    const button = await page.getByRole('button', { name: 'Save preferences' }).boundingBox();
    assert.ok(button && button.height >= 36 && button.x + button.width <= 360, `button box ${JSON.stringify(button)}`);
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    await context.close();
  });
});
