/**
 * The design editor's second pass in chromium (see browser.ts for the harness): the canvas shows
 * the mail's body only (no default-style block on top, no dark band), Desktop and Phone change the
 * canvas width and show which is pressed, at 1280 px and at 390 px; the links that go nowhere
 * (the shipped designs' `#add-your-link`) are listed and set from the Links panel; unsaved
 * changes are not lost silently (the console's links and Back ask inline, the browser asks
 * before a reload). Axe and screenshots.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { skipWithoutChromium, startConsole, type ConsoleHarness } from './browser.js';
import { WIDTHS } from './second-pass.layout.js';

const SHOP = 'https://shop.example.com/autumn';

describe('the design editor, second pass', { skip: skipWithoutChromium }, () => {
  let h: ConsoleHarness;
  let newsletter = 0;

  before(async () => {
    h = await startConsole();
    const templates = (await h.t.a.get('/get-design/template')).body.message.templates as Array<{ id: number; template_name: string }>;
    newsletter = templates.find((x) => x.template_name === 'Newsletter')!.id;
  });
  after(async () => {
    await h?.close();
  });

  /** Opens the editor on a copy of the shipped Newsletter and waits until it can be used. */
  async function openEditor(page: Page): Promise<void> {
    await page.goto(`${h.base}/app/designs/new?from=${newsletter}`);
    await page.getByRole('heading', { level: 1, name: 'New design' }).waitFor();
    await page.waitForFunction(() => {
      const b = [...document.querySelectorAll('button')].find((x) => x.textContent === 'Save design');
      return b && !b.disabled;
    });
    await page.frameLocator('.gjs-frame').getByText('The biggest things we shipped this month').waitFor();
  }

  const frameWidth = (page: Page) => page.locator('.gjs-frame').evaluate((f) => f.getBoundingClientRect().width);

  for (const size of WIDTHS) {
    it(`shows the mail alone in the canvas, and Desktop and Phone at ${size.width} px`, async () => {
      const { context, page, problems } = await h.open({ viewport: { width: size.width, height: size.height } });
      await h.signIn(page);
      await openEditor(page);
      const canvas = page.frameLocator('.gjs-frame');

      // The head's default-attribute elements (an empty text, section and button) are not drawn.
      assert.equal(await canvas.locator('[data-gjs-type="mj-head"]').isVisible(), false);
      // The first thing drawn is the body's first section, at the very top of the frame.
      const top = await canvas
        .locator('[data-gjs-type="mj-body"]')
        .evaluate((body) => Math.round(body.getBoundingClientRect().top - body.ownerDocument.body.getBoundingClientRect().top));
      assert.equal(top, 0, 'nothing above the mail’s body');

      // The canvas fills its box: no band above or beside it, and its background is light.
      const fit = await page.evaluate(() => {
        const host = document.querySelector('.gjs-host')!.getBoundingClientRect();
        const cv = document.querySelector('.gjs-cv-canvas')!;
        const r = cv.getBoundingClientRect();
        const [red, green, blue] = getComputedStyle(cv).backgroundColor.match(/\d+/g)!.map(Number);
        return { top: Math.round(r.top - host.top), right: Math.round(host.right - r.right), light: (red + green + blue) / 3 > 200 };
      });
      assert.ok(Math.abs(fit.top) <= 1 && Math.abs(fit.right) <= 2 && fit.light, JSON.stringify(fit));

      // Desktop is pressed at first, and looks it; Phone narrows the frame below MJML's 480 px breakpoint.
      const desktop = page.getByRole('button', { name: 'Desktop', exact: true });
      const phone = page.getByRole('button', { name: 'Phone', exact: true });
      assert.equal(await desktop.getAttribute('aria-pressed'), 'true');
      assert.equal(await phone.getAttribute('aria-pressed'), 'false');
      const look = (b: typeof desktop) => b.evaluate((el) => getComputedStyle(el).backgroundColor);
      assert.notEqual(await look(desktop), await look(phone), 'the pressed button looks pressed');
      const wide = await frameWidth(page);
      assert.ok(wide >= 600, `the desktop preview is as wide as a desktop mail (${wide})`);
      // On a phone the desktop preview scrolls in its own box: the page itself never scrolls sideways.
      const pageFits = () => page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1);
      assert.ok(await pageFits(), 'no sideways scroll with the desktop preview');
      await h.shot(page, `second-pass-editor-${size.width}`);
      await phone.click();
      assert.equal(await phone.getAttribute('aria-pressed'), 'true');
      assert.equal(await desktop.getAttribute('aria-pressed'), 'false');
      await page.waitForFunction(() => (document.querySelector('.gjs-frame')?.getBoundingClientRect().width ?? 999) <= 360);
      assert.ok((await frameWidth(page)) < wide - 200);
      assert.notEqual(await look(desktop), await look(phone));
      assert.ok(await pageFits(), 'no sideways scroll with the phone preview');
      await h.shot(page, `second-pass-editor-phone-${size.width}`);
      await desktop.click();
      await page.waitForFunction((w) => (document.querySelector('.gjs-frame')?.getBoundingClientRect().width ?? 0) >= w - 1, wide);
      assert.deepEqual(await h.axeViolations(page), []);
      assert.deepEqual(problems, []);
      await context.close();
    });
  }

  it('lists the links that go nowhere and sets one from the Links panel', async () => {
    const { context, page, problems } = await h.open({ viewport: { width: 1280, height: 900 } });
    await h.signIn(page);
    await openEditor(page);
    const links = page.getByRole('region', { name: 'Links' });
    await links.getByText('4 links go nowhere yet:').waitFor();
    assert.deepEqual(await links.getByRole('button').evaluateAll((buttons) => buttons.map((b) => b.getAttribute('aria-label'))), [
      'Set the link of Button “Read the story”',
      'Set the link of Link “Read more →”',
      'Set the link of Link “Read more →”',
      'Set the link of Button “Visit our website”',
    ]);
    await h.shot(page, 'second-pass-editor-links');

    // Setting one: it is selected in the canvas, its address field says it goes nowhere and takes the focus.
    await links.getByRole('button', { name: 'Set the link of Button “Read the story”' }).click();
    const selected = page.getByRole('region', { name: 'Selected button' });
    await selected.getByText('This button goes nowhere yet').waitFor();
    const address = page.getByLabel('Link address');
    assert.equal(await address.inputValue(), '#add-your-link');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'design-href');
    await address.fill(SHOP);
    await page.getByRole('button', { name: 'Set link' }).click();
    await page.getByRole('status').filter({ hasText: 'Link set.' }).waitFor();
    await page.getByText('3 links go nowhere yet:').waitFor();
    assert.equal(await selected.getByText('This button goes nowhere yet').count(), 0);

    // A click on a button in the canvas selects it and shows its link too.
    await page.frameLocator('.gjs-frame').getByText('Visit our website').click();
    await page.getByRole('region', { name: 'Selected button' }).getByText('This button goes nowhere yet').waitFor();
    assert.equal(await address.inputValue(), '#add-your-link');

    await page.getByLabel('Design name').fill('Autumn letter');
    await page.getByRole('button', { name: 'Save design' }).click();
    await page.getByRole('status').filter({ hasText: 'Design saved. 3 links go nowhere yet: set them before sending.' }).waitFor();
    const id = Number(/\/app\/designs\/(\d+)$/.exec(page.url())?.[1]);
    const saved = (await h.t.a.get('/designs/details', { id })).body.message.design;
    assert.ok(saved.html_code.includes(`href="${SHOP}"`), 'the link set is in the design');
    assert.equal(saved.html_code.split('href="#add-your-link"').length - 1, 3, 'the others still go nowhere, and say so');
    assert.deepEqual(await h.axeViolations(page), []);
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('asks before unsaved changes are left: the console’s links and Back inline, a reload through the browser', async () => {
    const { context, page, problems } = await h.open({ viewport: { width: 1280, height: 900 } });
    const dialogs: string[] = [];
    page.on('dialog', (d) => dialogs.push(d.type()));
    await h.signIn(page);
    await openEditor(page);
    const editorUrl = page.url();
    assert.deepEqual(dialogs, []);

    // Nothing changed yet: leaving does not ask.
    assert.equal(await page.getByText('Unsaved changes').count(), 0);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Designs', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Designs' }).waitFor();

    // Opened through the console's links (so Back stays in the console); a block added: the page
    // says so, and a link away asks first.
    await page.getByRole('link', { name: 'New design' }).click();
    await page.getByRole('link', { name: 'Start from Newsletter' }).click();
    await page.getByRole('heading', { level: 1, name: 'New design' }).waitFor();
    await page.frameLocator('.gjs-frame').getByText('The biggest things we shipped this month').waitFor();
    await page.getByRole('region', { name: 'Blocks' }).getByRole('button', { name: 'Divider', exact: true }).click();
    await page.getByText('Unsaved changes').waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview', exact: true }).click();
    const ask = page.getByRole('region', { name: 'Leave without saving?' });
    await ask.waitFor();
    assert.equal(page.url(), editorUrl);
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-labelledby')), 'leave-title');
    assert.deepEqual(await h.axeViolations(page), []);
    await h.shot(page, 'second-pass-editor-leave');
    await ask.getByRole('button', { name: 'Stay and keep editing' }).click();
    assert.equal(await ask.count(), 0);

    // The browser's Back button asks too, and the page stays.
    await page.evaluate(() => history.back());
    await ask.waitFor();
    assert.equal(page.url(), editorUrl);
    await page.getByRole('heading', { level: 1, name: 'New design' }).waitFor();

    // A reload or a closed tab: the browser asks (beforeunload).
    await page.close({ runBeforeUnload: true });
    await page.waitForEvent('close').catch(() => {});
    assert.deepEqual(dialogs, ['beforeunload']);
    // The harness counts any dialog as a problem: this one was wanted.
    assert.deepEqual(
      problems.filter((p) => p !== 'dialog: '),
      [],
    );
    await context.close();
  });

  it('leaves without saving when told to, and asks nothing once the design is saved', async () => {
    const { context, page, problems } = await h.open({ viewport: { width: 390, height: 844 } });
    const dialogs: string[] = [];
    page.on('dialog', (d) => dialogs.push(d.type()));
    await h.signIn(page);
    await openEditor(page);
    await page.getByLabel('Design name').fill('Renamed letter');
    await page.getByText('Unsaved changes').waitFor();
    await page.getByRole('link', { name: '← Designs' }).click();
    const ask = page.getByRole('region', { name: 'Leave without saving?' });
    await ask.getByRole('button', { name: 'Leave without saving' }).click();
    await page.getByRole('heading', { level: 1, name: 'Designs' }).waitFor();
    assert.equal((await h.t.a.get('/designs')).body.message.designs.filter((d: { name: string }) => d.name === 'Renamed letter').length, 0);

    // Saved: the changes are kept, and nothing asks.
    await openEditor(page);
    await page.getByRole('region', { name: 'Blocks' }).getByRole('button', { name: 'Spacer', exact: true }).click();
    await page.getByLabel('Design name').fill('Kept letter');
    await page.getByRole('button', { name: 'Save design' }).click();
    await page.getByRole('status').filter({ hasText: 'Design saved.' }).waitFor();
    assert.equal(await page.getByText('Unsaved changes').count(), 0);
    await page.getByRole('link', { name: '← Designs' }).click();
    await page.getByRole('link', { name: 'Kept letter' }).waitFor();
    await page.goto(`${h.base}/app/designs`);
    assert.deepEqual(dialogs, []);
    assert.deepEqual(problems, []);
    await context.close();
  });
});
