/**
 * The Designs section in a real browser (see browser.ts for the harness): the list, a new design
 * from a shipped one in the GrapesJS editor (a block added by a click, text typed, a placeholder
 * inserted, saved and reopened, the phone preview), duplicate and delete; axe and screenshots.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { skipWithoutChromium, startConsole, type ConsoleHarness } from './browser.js';
import { mjmlText } from '../support/designs.js';

const XSS = '<img src=x onerror="window.__xss=1;alert(1)">';

describe('the Designs section in chromium', { skip: skipWithoutChromium }, () => {
  let h: ConsoleHarness;

  before(async () => {
    h = await startConsole();
  });
  after(async () => {
    await h?.close();
  });

  /** Every request the page makes that does not go to the service. */
  function outside(page: Page): string[] {
    const urls: string[] = [];
    page.on('request', (r) => {
      const url = r.url();
      if (!url.startsWith(h.base) && !/^(data|blob|about):/.test(url)) urls.push(url);
    });
    return urls;
  }

  it('lists, creates in the editor, reopens, duplicates and deletes a design', async () => {
    const { t } = h;
    assert.equal((await t.a.post('/designs/create', { name: XSS, template_json: mjmlText('Old news') })).status, 200);
    const theirs = (await t.b.post('/designs/create', { name: 'Their design', template_json: mjmlText('Not yours') })).body.id;
    assert.ok(theirs > 0);

    const { context, page, problems } = await h.open({ viewport: { width: 1280, height: 900 } });
    const away = outside(page);
    await h.signIn(page);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Designs', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Designs' }).waitFor();
    await page.getByRole('link', { name: XSS }).waitFor();
    assert.equal(await page.getByText('Their design').count(), 0, "another account's design is not listed");
    assert.equal(await page.locator('main img').count(), 0, 'the name is text');
    assert.deepEqual(await h.axeViolations(page), [], 'axe on the list');
    await h.shot(page, 'designs-list');

    // A new design from a shipped one.
    await page.getByRole('link', { name: 'New design' }).click();
    await page.getByRole('heading', { level: 1, name: 'New design' }).waitFor();
    await page.getByRole('link', { name: 'Start from Newsletter' }).waitFor();
    assert.deepEqual(await h.axeViolations(page), [], 'axe on the choice of a start');
    await h.shot(page, 'designs-new');
    await page.getByRole('link', { name: 'Start from Newsletter' }).click();
    const save = page.getByRole('button', { name: 'Save design' });
    await page.waitForFunction(() => {
      const b = [...document.querySelectorAll('button')].find((x) => x.textContent === 'Save design');
      return b && !b.disabled;
    });
    assert.equal(await page.getByLabel('Design name').inputValue(), 'Newsletter');
    await page.getByLabel('Design name').fill('');
    await save.click();
    assert.equal(await page.getByRole('alert').textContent(), 'The design name field is required.');
    assert.equal(await page.getByLabel('Design name').getAttribute('aria-invalid'), 'true');
    await page.getByLabel('Design name').fill('Spring letter');

    // A click on the Text block adds a text block (selected); a double click edits it.
    const canvas = page.frameLocator('.gjs-frame');
    await page.getByRole('region', { name: 'Blocks' }).getByRole('button', { name: 'Text', exact: true }).click();
    const added = canvas.getByText('Insert text here');
    await added.waitFor();
    await added.dblclick();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('Our spring sale starts now, ');
    await page.getByLabel('Placeholder').selectOption('first_name');
    await page.getByRole('button', { name: 'Insert placeholder' }).click();
    await canvas.getByText('Our spring sale starts now, ((first_name))').waitFor();
    // The blocks work from the keyboard too: Enter on Divider adds one after the selected text.
    const blocks = page.getByRole('region', { name: 'Blocks' });
    await blocks.getByRole('button', { name: 'Divider', exact: true }).focus();
    await page.keyboard.press('Enter');
    await save.click();
    await page.getByRole('status').filter({ hasText: 'Design saved.' }).waitFor();
    await page.getByRole('heading', { level: 1, name: 'Edit design: Spring letter' }).waitFor();
    const id = Number(/\/app\/designs\/(\d+)$/.exec(page.url())?.[1]);
    assert.ok(id > 0, page.url());

    const design = (await t.a.get('/designs/details', { id })).body.message.design;
    assert.equal(design.name, 'Spring letter');
    // The space typed before the placeholder may be a no-break space (contenteditable keeps a trailing space so).
    const spaced = (s: string) => s.replace(/(?:\s|\u00a0|&nbsp;)+/g, ' ');
    assert.ok(spaced(design.template_json).includes('Our spring sale starts now, ((first_name))'), design.template_json);
    assert.ok(spaced(design.html_code).includes('Our spring sale starts now, ((first_name))'));
    assert.match(design.html_code, /^<!doctype html>/i);
    assert.ok(design.html_code.includes('<td'), 'compiled from MJML');
    assert.equal(design.template_json.split('"mj-divider"').length - 1, 2, 'the newsletter’s divider and the one added');
    assert.deepEqual(await h.axeViolations(page), [], 'axe on the editor');
    await h.shot(page, 'designs-editor');

    // Reopened, the canvas shows the saved text; the phone preview narrows the canvas.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Edit design: Spring letter' }).waitFor();
    await page.frameLocator('.gjs-frame').getByText('Our spring sale starts now, ((first_name))').waitFor();
    const frameWidth = () => page.locator('.gjs-frame').evaluate((f) => f.getBoundingClientRect().width);
    const wide = await frameWidth();
    await page.getByRole('button', { name: 'Phone' }).click();
    assert.equal(await page.getByRole('button', { name: 'Phone' }).getAttribute('aria-pressed'), 'true');
    await page.waitForFunction(() => (document.querySelector('.gjs-frame')?.getBoundingClientRect().width ?? 0) <= 400);
    assert.ok((await frameWidth()) < wide);
    await h.shot(page, 'designs-editor-phone');

    // Duplicate and delete from the list.
    await page.getByRole('link', { name: '← Designs' }).click();
    await page.getByRole('heading', { level: 1, name: 'Designs' }).waitFor();
    await page.getByRole('button', { name: 'Duplicate Spring letter' }).click();
    await page.getByRole('status').filter({ hasText: '“Spring letter” duplicated.' }).waitFor();
    await page.getByRole('link', { name: 'Spring letter (copy)' }).waitFor();
    const names = (await t.a.get('/designs')).body.message.designs.map((d: { name: string }) => d.name);
    assert.deepEqual(names, ['Spring letter (copy)', 'Spring letter', XSS]);
    await page.getByRole('button', { name: 'Delete Spring letter (copy)' }).click();
    await page.getByRole('button', { name: 'Delete for good' }).click();
    await page.getByRole('status').filter({ hasText: '“Spring letter (copy)” deleted.' }).waitFor();
    await page.getByRole('link', { name: 'Spring letter (copy)' }).waitFor({ state: 'detached' });
    assert.equal((await t.a.get('/designs')).body.message.designs.length, 2);

    assert.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined);

    // Another account's design does not open.
    await page.goto(`${h.base}/app/designs/${theirs}`);
    assert.equal(await page.getByRole('alert').textContent(), 'Record not found');
    await page.getByRole('heading', { level: 1, name: 'Design not found' }).waitFor();
    assert.equal(await page.locator('.gjs-frame').count(), 0);
    assert.equal(await page.getByText('Not yours').count(), 0);

    assert.deepEqual(away, [], 'no request outside the service');
    // The 422 of the save without a name and the 404 of another account's design are the console errors expected here.
    assert.deepEqual(
      problems.filter((p) => !p.includes('status of 422') && !p.includes('status of 404')),
      [],
    );
    await context.close();
  });

  it('fits a phone-sized screen: the list and the editor scroll no sideways', async () => {
    const { t } = h;
    assert.equal(
      (await t.a.post('/designs/create', { name: 'Pocket', template_json: mjmlText('Small screen ((first_name))') })).status,
      200,
    );
    const { context, page, problems } = await h.open({
      viewport: { width: 360, height: 740 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
    });
    await h.signIn(page);
    const sideways = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    await page.goto(`${h.base}/app/designs`);
    await page.getByRole('link', { name: 'Pocket' }).waitFor();
    assert.ok((await sideways()) <= 0, 'list wider than the screen');
    await page.getByRole('link', { name: 'Pocket' }).click();
    await page.getByRole('heading', { level: 1, name: 'Edit design: Pocket' }).waitFor();
    await page.frameLocator('.gjs-frame').getByText('Small screen ((first_name))').waitFor();
    assert.ok((await sideways()) <= 0, 'editor wider than the screen');
    await h.shot(page, 'designs-editor-small-screen');
    assert.deepEqual(problems, []);
    await context.close();
  });
});
