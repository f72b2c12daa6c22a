/**
 * The reference at /docs in a real browser (Debian's chromium, driven by playwright-core) against
 * the app on a real loopback port: under its Content-Security-Policy the page renders every
 * operation and "Try it out" works, with no violation reported and nothing asked of another
 * origin (any such request is aborted, never sent). Skipped, with the reason, only where
 * /usr/bin/chromium is missing.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { setup, type TestContext } from '../helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM)
  ? false
  : `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium) to run the browser test`;

describe('the reference page /docs in chromium', { skip }, () => {
  let t: TestContext;
  let browser: Browser;
  let base: string;

  before(async () => {
    t = await setup();
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

  it('renders the operations and runs "Try it out" under its policy, asking nothing of another origin', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    const elsewhere: string[] = [];
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(`${base}/`) || url.startsWith('data:')) return route.continue();
      elsewhere.push(url);
      return route.abort();
    });
    page.on('console', (m) => {
      if (m.type() === 'error' || /Content Security Policy/i.test(m.text())) problems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    await page.exposeFunction('reportViolation', (text: string) => problems.push(`violation: ${text}`));
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => {
        (window as unknown as { reportViolation(t: string): void }).reportViolation(
          `${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}:${e.columnNumber} ${e.sample}`,
        );
      });
    });
    try {
      const shown = await page.goto(`${base}/docs`);
      assert.equal(shown?.status(), 200);
      assert.ok(shown?.headers()['content-security-policy'], 'the page carries its policy');
      await page.locator('.swagger-ui .info .title').getByText('Campaign API').waitFor();
      assert.ok((await page.locator('.opblock').count()) > 50, 'every operation is listed');

      const live = page.locator('.opblock').filter({ has: page.locator('[data-path="/health/live"]') });
      await live.locator('.opblock-summary').click();
      await live.getByRole('button', { name: 'Try it out' }).click();
      await live.getByRole('button', { name: 'Execute' }).click();
      await live.locator('.live-responses-table tbody .response-col_status').first().getByText('200').waitFor();

      assert.deepEqual(problems, []);
      assert.deepEqual(elsewhere, []);
    } finally {
      await context.close();
    }
  });
});
