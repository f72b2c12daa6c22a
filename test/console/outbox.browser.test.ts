/**
 * Outbox mode in the console, in chromium (see browser.ts for the harness): without an SMTP server
 * the service writes mail to files, and the console says so on every page to those who may change
 * the settings (a banner, read once per sign-in), and shows the newest mails on the Outbox page,
 * where the first sender is verified by clicking its link. Nobody else is shown the banner or the
 * page, and makes no request that fails; with an SMTP server there is no banner. Axe and
 * screenshots at 1280 and 390 px.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { drainQueue } from '../helpers.js';
import { senderForm } from '../modules/senders.helpers.js';
import { PASSWORD, person } from '../modules/access/sessions.helpers.js';
import { skipWithoutChromium, startConsole, type ConsoleHarness } from './browser.js';
import { WIDTHS } from './second-pass.layout.js';

/** Where the service's links point in the tests (PUBLIC_URL); the browser is sent to the app's real port instead. */
const PUBLIC_URL = 'http://localhost:3000';

const banner = (page: Page) => page.getByRole('region', { name: 'Mail is not being sent' });
const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name }).waitFor();

/** The requests to the service that failed (status 400 and above, or no answer), and those to GET /outbox. */
function watchRequests(page: Page) {
  const seen = { failed: [] as string[], outbox: 0 };
  page.on('response', (r) => {
    if (r.status() >= 400) seen.failed.push(`${r.status()} ${new URL(r.url()).pathname}`);
    if (new URL(r.url()).pathname === '/outbox') seen.outbox++;
  });
  page.on('requestfailed', (r) => seen.failed.push(`failed ${r.url()}`));
  return seen;
}

/** axe-core clean and a screenshot at each width; the page no wider than a phone's screen. */
async function check(h: ConsoleHarness, page: Page, name: string) {
  for (const { width, height } of WIDTHS) {
    await page.setViewportSize({ width, height });
    assert.deepEqual(await h.axeViolations(page), [], `axe on ${name} at ${width} px`);
    const [scroll, client] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
    assert.ok(scroll <= client, `${name} wider than ${width} px: ${scroll}`);
    await h.shot(page, `${name}-${width}`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

async function signInAs(h: ConsoleHarness, page: Page, email: string) {
  await page.goto(`${h.base}/app`);
  await h.fillSignIn(page, email, PASSWORD);
  await heading(page, 'Overview');
}

describe('the console in outbox mode', { skip: skipWithoutChromium }, () => {
  let h: ConsoleHarness;

  before(async () => {
    h = await startConsole();
  });
  after(async () => {
    await h?.close();
  });

  it('says so on every page, lists the newest mails, and verifies the first sender from its link', async () => {
    const { t } = h;
    const { context, page, problems } = await h.open({ viewport: { width: 1280, height: 900 } });
    // The mailed links name PUBLIC_URL: the browser gets the app's answer for them.
    await context.route(`${PUBLIC_URL}/**`, async (route) =>
      route.fulfill({ response: await route.fetch({ url: route.request().url().replace(PUBLIC_URL, h.base) }) }),
    );
    const requests = watchRequests(page);
    await h.signIn(page);
    await banner(page).getByText(t.config.outboxDir).waitFor();
    await check(h, page, 'outbox-banner');

    // On every page, read once for the sign-in.
    const nav = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();
    for (const name of ['Contacts', 'Single sends', 'Settings']) {
      await nav(name);
      await heading(page, name);
      await banner(page).waitFor();
    }
    assert.equal(requests.outbox, 1, 'GET /outbox once per sign-in');

    // A first sender (added through the API: the console's form has tests of its own); the queue writes its verification mail to the outbox.
    assert.equal(
      (await t.a.post('/sender/save', senderForm({ from_name: 'Autumn News', from_email: 'news@shop.example.com' }))).status,
      200,
    );
    assert.ok((await drainQueue(t)) >= 1);

    // The banner leads to the Outbox page, which reads the mails anew.
    await banner(page).getByRole('link', { name: 'See the latest mails' }).click();
    await heading(page, 'Outbox');
    assert.equal(await banner(page).getByRole('link').count(), 0, 'no link to the page itself');
    const mail = page.getByRole('list', { name: 'Newest mails' }).getByRole('listitem').filter({ hasText: 'Verify your sender address' });
    await mail.getByText('to news@shop.example.com').waitFor();
    await mail.getByText('Service mail').waitFor();
    assert.equal(requests.outbox, 2, 'the Outbox page reads it again');
    await mail.getByText('Verify your sender address').click();
    const verify = mail.getByRole('link', { name: /\/sender\/verify\?token=/ });
    await verify.waitFor();
    assert.equal(await verify.getAttribute('target'), '_blank');
    assert.equal(await verify.getAttribute('rel'), 'noopener noreferrer');
    await check(h, page, 'outbox-page');

    // Clicked: the link opens in a new tab and verifies the sender.
    const [tab] = await Promise.all([context.waitForEvent('page'), verify.click()]);
    await tab.getByRole('heading', { name: 'Sender verified' }).waitFor();
    await tab.close();

    // Refresh reads it once more and says how many mails there are.
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Refreshed: \d+ mails?\.$/ })
      .waitFor();
    assert.equal(requests.outbox, 3);

    // The sender is verified, through the API and on its page.
    const senders = (await t.a.get('/senders')).body.message.senders as Array<{ from_email: string; is_verified: number }>;
    assert.equal(senders.find((s) => s.from_email === 'news@shop.example.com')?.is_verified, 1);
    await page.goto(`${h.base}/app/settings/senders`);
    await page
      .getByRole('row', { name: /Autumn News/ })
      .getByText('Verified', { exact: true })
      .waitFor();

    assert.deepEqual(requests.failed, []);
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('shows an editor no banner and no Outbox page, with no request that fails', async () => {
    const editor = await person(h.t, 'editor');
    const { context, page, problems } = await h.open({ viewport: { width: 1280, height: 900 } });
    const requests = watchRequests(page);
    await signInAs(h, page, editor.email);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings', exact: true }).click();
    await heading(page, 'Settings');
    await page.getByRole('main').getByRole('link', { name: 'Senders', exact: true }).waitFor();
    assert.equal(await page.getByRole('main').getByRole('link', { name: 'Outbox' }).count(), 0, 'no Outbox entry');
    await page.goto(`${h.base}/app/settings/outbox`);
    await heading(page, 'Not allowed');
    await page.waitForLoadState('networkidle');
    assert.equal(await banner(page).count(), 0, 'no banner');
    assert.equal(requests.outbox, 0, 'GET /outbox is not asked without settings.write');
    assert.deepEqual(requests.failed, []);
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('offers a viewer no link to create an automation on the empty list', async () => {
    const viewer = await person(h.t, 'viewer');
    const { context, page, problems } = await h.open({ viewport: { width: 1280, height: 900 } });
    await signInAs(h, page, viewer.email);
    await page.goto(`${h.base}/app/automations`);
    await page.getByRole('cell', { name: 'No automations yet.' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'Create the first one' }).count(), 0);
    assert.equal(await banner(page).count(), 0);
    assert.deepEqual(problems, []);
    await context.close();
  });
});

describe('the console with an SMTP server', { skip: skipWithoutChromium }, () => {
  let h: ConsoleHarness;

  before(async () => {
    h = await startConsole({}, { sink: true });
  });
  after(async () => {
    await h?.close();
  });

  it('shows no banner, and the Outbox page says mail goes out', async () => {
    const { context, page, problems } = await h.open({ viewport: { width: 1280, height: 900 } });
    const requests = watchRequests(page);
    await h.signIn(page);
    // The overview loads its chart's code lazily: leaving before it arrives would abort that request.
    await page.waitForLoadState('networkidle');
    await page.goto(`${h.base}/app/settings`);
    await page.getByRole('main').getByRole('link', { name: 'Outbox', exact: true }).click();
    await heading(page, 'Outbox');
    await page.getByText('Mail goes out through the SMTP server set in SMTP_URL').waitFor();
    assert.equal(await banner(page).count(), 0, 'no banner');
    assert.ok(requests.outbox >= 1);
    await check(h, page, 'outbox-smtp');
    assert.deepEqual(requests.failed, []);
    assert.deepEqual(problems, []);
    await context.close();
  });
});
