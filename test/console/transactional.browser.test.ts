/**
 * The console's transactional templates page, in chromium (see browser.ts): a template made, a
 * version refused for its Handlebars (the service's words on the field), saved, a second version
 * made active, the first made active again; a viewer sees the versions without a button that would
 * fail. axe-core, and screenshots at 1280 and 390 px wide.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { PASSWORD, person } from '../modules/access/sessions.helpers.js';
import { skipWithoutChromium, startConsole, type ConsoleHarness } from './browser.js';

describe('transactional templates in the console', { skip: skipWithoutChromium }, () => {
  let h: ConsoleHarness;
  before(async () => {
    h = await startConsole();
  });
  after(async () => {
    await h?.close();
  });

  const status = (page: Page, text: string | RegExp) => page.getByRole('status').filter({ hasText: text }).waitFor();

  /** axe-core clean, and a screenshot at 1280 and at 390 px wide (no sideways scroll on the phone). */
  async function check(page: Page, name: string) {
    assert.deepEqual(await h.axeViolations(page), [], `axe on ${name}`);
    await page.setViewportSize({ width: 1280, height: 900 });
    await h.shot(page, `${name}-1280`);
    await page.setViewportSize({ width: 390, height: 844 });
    const width = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
    assert.ok(width[0] <= width[1], `${name} wider than a phone: ${width}`);
    await h.shot(page, `${name}-390`);
    await page.setViewportSize({ width: 1280, height: 900 });
  }

  it('makes a template and its versions, shows Handlebars refusals on their fields, and switches the active version', async () => {
    const { context, page, problems } = await h.open();
    await h.signIn(page);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Templates', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Transactional templates' }).waitFor();
    await page.getByText('No templates yet.').waitFor();

    await page.getByLabel('New template').fill('Password reset');
    await page.getByRole('button', { name: 'Create template' }).click();
    await status(page, 'Template Password reset created.');
    await page.getByRole('heading', { level: 2, name: /Password reset/ }).waitFor();

    await page.getByRole('button', { name: 'New version' }).click();
    await page.getByLabel('Name', { exact: true }).fill('First');
    await page.getByLabel('Subject').fill('Reset, {{name}}');
    await page.getByLabel('HTML', { exact: true }).fill('<p>{{#if name}}Hi {{name}}</p>');
    await page.getByRole('button', { name: 'Save version' }).click();
    const error = page.locator('#version-html_content-error');
    await error.waitFor();
    assert.match((await error.textContent())!, /not valid Handlebars/);
    assert.equal(await page.getByLabel('HTML', { exact: true }).getAttribute('aria-invalid'), 'true');
    await check(page, 'transactional-templates-refused');

    await page.getByLabel('HTML', { exact: true }).fill('<p>{{#if name}}Hi {{name}}{{/if}}</p>');
    await page.getByLabel('Test data (JSON)').fill('{"name":"Ann"}');
    await page.getByRole('button', { name: 'Save version' }).click();
    await status(page, 'Version First saved.');
    const first = page.getByRole('row', { name: /^First / });
    assert.match(await first.innerText(), /Active/);

    // Saved, the editor closes.
    assert.equal(await page.getByRole('button', { name: 'Save version' }).count(), 0);
    await page.getByRole('button', { name: 'New version' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Second');
    await page.getByLabel('Subject').fill('Your reset');
    await page.getByRole('button', { name: 'Save version' }).click();
    await status(page, 'Version Second saved.');
    await page.getByRole('button', { name: 'Make active: Second' }).click();
    await status(page, 'Version Second is now the active one.');
    assert.match(await page.getByRole('row', { name: /Password reset/ }).innerText(), /Second/);
    await page.getByRole('button', { name: 'Make active: First' }).click();
    await status(page, 'Version First is now the active one.');

    // What the page did is what the API holds.
    const list = await h.t.a.get('/v3/templates');
    const template = list.body.result[0];
    assert.deepEqual(
      template.versions.map((v: { name: string; active: number }) => [v.name, v.active]),
      [
        ['First', 1],
        ['Second', 0],
      ],
    );
    await page.getByRole('button', { name: 'Edit First' }).click();
    assert.equal(await page.getByLabel('Test data (JSON)').inputValue(), '{"name":"Ann"}');
    await check(page, 'transactional-templates');
    // The one refusal asked for above, and nothing else.
    assert.deepEqual(problems, ['console: Failed to load resource: the server responded with a status of 400 (Bad Request)']);
    await context.close();
  });

  it('shows a viewer the templates and versions without a button that would change them', async () => {
    const viewer = await person(h.t, 'viewer');
    const { context, page, problems } = await h.open();
    await page.goto(`${h.base}/app`);
    await h.fillSignIn(page, viewer.email, PASSWORD);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Templates', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Transactional templates' }).waitFor();
    await page.getByRole('button', { name: 'Open Password reset' }).click();
    await page.getByRole('button', { name: 'View First' }).click();
    const names = await page.getByRole('main').getByRole('button').allTextContents();
    assert.deepEqual(
      names.filter((n) => /Create|Delete|Save|Make|New/.test(n)),
      [],
    );
    assert.deepEqual(problems, []);
    await context.close();
  });
});
