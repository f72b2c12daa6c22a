/**
 * The reference at /docs in a real browser (Debian's chromium, driven by playwright-core) against
 * the app on a real loopback port: under its Content-Security-Policy the page renders every
 * operation (one tag's document at a time) and "Try it out" works, with no violation reported and nothing asked of another
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
      // One tag at a time, chosen in the top bar, Operations first: every operation of the whole
      // document is listed under its tag.
      const doc = JSON.parse((await t.app.inject({ method: 'GET', url: '/openapi.json' })).body) as {
        paths: Record<string, Record<string, { tags?: string[] }>>;
      };
      const opsOf = new Map<string, number>();
      for (const item of Object.values(doc.paths))
        for (const op of Object.values(item)) for (const tag of op.tags ?? []) opsOf.set(tag, (opsOf.get(tag) ?? 0) + 1);
      const picker = page.locator('.topbar select');
      const tags = await picker.locator('option').allTextContents();
      assert.equal(tags[0], 'Operations');
      assert.deepEqual([...tags].sort(), [...opsOf.keys()].sort(), 'every tag has its document');
      for (const tag of [...tags.slice(1), tags[0]]) {
        await picker.selectOption({ label: tag });
        await page.locator('.opblock-tag').getByText(tag, { exact: true }).waitFor();
        await page.waitForFunction((n) => document.querySelectorAll('.opblock').length === n, opsOf.get(tag)!, { timeout: 20_000 });
      }

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
