/**
 * The console's forms, second pass, in chromium (see browser.ts for the harness): no choice is
 * made for the reader (every required select starts empty, with a prompt); a refusal shows each
 * field's error next to the field, worded with the form's label (never the API's field name), in
 * the form's order, with the focus on the first; and a note belongs to the latest action only.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { skipWithoutChromium, startConsole, type ConsoleHarness } from './browser.js';
import { seedAccount, type Seeded } from './second-pass.seed.js';

/** The failed calls a test makes on purpose (a 422 shown on its fields) are logged by chromium as errors. */
const unexpected = (problems: string[]) => problems.filter((p) => !/status of (409|422)/.test(p));

describe('the console’s forms, second pass', { skip: skipWithoutChromium }, () => {
  let h: ConsoleHarness;
  let seeded: Seeded;
  /** An automation without emails (it cannot go live yet). */
  let bare = '';

  before(async () => {
    h = await startConsole({ webhooksAllowPrivate: true });
    seeded = await seedAccount(h.t, 'http://127.0.0.1:9/hook');
    const r = await h.t.a.post('/automations/create', {
      type: 'custom',
      automation_for: `contacts_${seeded.typeId}`,
      automation_name: 'Win-back',
      unsubscribe_group_id: seeded.groupId,
    });
    assert.equal(r.status, 200, r.text);
    bare = r.body.message.utr;
  });
  after(async () => {
    await h?.close();
  });

  /** Each select of the page's forms: its label, value and the text shown for it. */
  const selects = (page: Page) =>
    page.locator('main form select').evaluateAll((list) =>
      (list as HTMLSelectElement[]).map((s) => ({
        id: s.id,
        label: s.labels?.[0]?.textContent?.trim() ?? '',
        value: s.value,
        shown: s.selectedOptions[0]?.textContent?.trim() ?? '',
        prompt: s.selectedOptions[0]?.disabled ?? false,
      })),
    );

  it('makes no choice for the reader: every required select of a new record starts empty, with a prompt', async () => {
    const { context, page, problems } = await h.open({ viewport: { width: 1280, height: 900 } });
    await h.signIn(page);
    const forms: Array<[path: string, labels: string[], ready: string]> = [
      ['/contacts/new', ['Contact type', 'Country'], 'Add contact'],
      ['/contacts/import', ['Contact type'], 'Import'],
      ['/contacts/fields', ['Field type'], 'Add field'],
      ['/segments/new', ['Contact type', 'Match'], 'Save segment'],
      ['/automations/new', ['Type', 'Runs for', 'Unsubscribe group'], 'Create automation'],
      [`/automations/${seeded.automationUtr}`, ['Email to test', 'Sender', 'Unit', 'Design'], 'Add email'],
      ['/settings/senders', ['Country'], 'Add sender'],
    ];
    const found: string[] = [];
    for (const [path, labels, ready] of forms) {
      await page.goto(`${h.base}/app${path}`);
      await page.getByRole('button', { name: ready, exact: true }).waitFor();
      // The lists have loaded (their options are there) before anything is checked.
      await page.waitForFunction(() =>
        [...document.querySelectorAll('main form select')].every((s) => (s as HTMLSelectElement).options.length > 1),
      );
      // The automation's own edit form shows what the automation has: not a default.
      const shown = (await selects(page)).filter((s) => !s.id.startsWith('edit-'));
      assert.deepEqual(
        shown.map((s) => s.label),
        labels,
        path,
      );
      for (const s of shown)
        if (s.value !== '' || !s.prompt || !/^Choose/.test(s.shown)) found.push(`${path}: ${s.label} starts at “${s.shown}”`);
    }
    assert.deepEqual(found, []);
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });

  it('shows each field’s error by the field, with its label, in the form’s order, the focus on the first', async () => {
    const { context, page, problems } = await h.open({ viewport: { width: 390, height: 844 } });
    await h.signIn(page);

    // A sender with nothing filled in: the API names country_id and reply_to_email.
    await page.goto(`${h.base}/app/settings/senders`);
    await page.getByRole('button', { name: 'Add sender' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    const text = await alert.innerText();
    const order = [
      'The nickname field is required.',
      'The from name field is required.',
      'The from email field is required.',
      'The reply-to email field is required.',
      'The company address field is required.',
      'The country field is required.',
    ];
    const at = order.map((m) => text.indexOf(m));
    assert.ok(
      at.every((i, n) => i >= 0 && (n === 0 || i > at[n - 1])),
      `in the form’s order: ${text}`,
    );
    assert.doesNotMatch(text, /country id|reply to email/);
    const country = page.getByLabel('Country');
    assert.equal(await country.getAttribute('aria-invalid'), 'true');
    assert.equal(await page.locator(`#${await country.getAttribute('aria-describedby')}`).innerText(), 'The country field is required.');
    const replyTo = page.getByLabel('Reply-to email');
    assert.equal(
      await page.locator(`#${await replyTo.getAttribute('aria-describedby')}`).innerText(),
      'The reply-to email field is required.',
    );
    assert.equal(await page.evaluate(() => document.activeElement?.id), 's-nickname', 'the focus is on the first field in error');
    assert.deepEqual(await h.axeViolations(page), []);
    await h.shot(page, 'second-pass-errors-sender');

    // An automation email with nothing chosen: the sender, by its label.
    await page.goto(`${h.base}/app/automations/${seeded.automationUtr}`);
    await page.getByRole('button', { name: 'Add email' }).click();
    const sender = page.getByLabel('Sender', { exact: true });
    await page.waitForFunction(() => document.activeElement?.id === 'email-sender');
    assert.equal(await page.locator(`#${await sender.getAttribute('aria-describedby')}`).innerText(), 'The sender field is required.');
    assert.equal(await page.getByText(/sender id/i).count(), 0);
    await h.shot(page, 'second-pass-errors-automation-email');

    // A contact: the contact type and the country, by their labels, in the form's order.
    await page.goto(`${h.base}/app/contacts/new`);
    await page.getByRole('button', { name: 'Add contact' }).click();
    await page.waitForFunction(() => document.activeElement?.id === 'f-type');
    const contactAlert = await page.getByRole('alert').innerText();
    assert.ok(
      contactAlert.indexOf('The contact type field is required.') < contactAlert.indexOf('The email field is required.') &&
        contactAlert.indexOf('The email field is required.') < contactAlert.indexOf('The country field is required.'),
      contactAlert,
    );
    assert.doesNotMatch(contactAlert, /contact type id/);
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });

  it('keeps only the latest action’s note: a refusal goes once the next action succeeds', async () => {
    const { context, page, problems } = await h.open({ viewport: { width: 1280, height: 900 } });
    await h.signIn(page);
    await page.goto(`${h.base}/app/automations/${bare}`);
    await page.getByRole('button', { name: 'Set live' }).click();
    await page.getByRole('alert').filter({ hasText: 'Add at least one email to live automation' }).waitFor();

    // The email the refusal asked for: added, and the refusal is gone.
    const verified = await page.locator('#email-sender option:not([disabled])').first().getAttribute('value');
    await page.getByLabel('Sender', { exact: true }).selectOption(verified!);
    await page.getByLabel('Subject').fill('We miss you');
    await page.getByLabel('Unit').selectOption('instantly');
    await page.getByLabel('Design', { exact: true }).selectOption({ label: 'Autumn news' });
    await page.getByRole('button', { name: 'Add email' }).press('Enter');
    await page.getByRole('status').filter({ hasText: 'Email “We miss you” added.' }).waitFor();
    assert.equal(await page.getByRole('alert').count(), 0, 'the refusal belongs to the earlier action');
    await h.shot(page, 'second-pass-latest-note');

    // And the other way round: a success's note goes when the next action is refused. (Keys, not
    // clicks, on this page: chromium may send a click made right after a scroll to where the
    // design preview's frame was a moment before.)
    await page.getByRole('button', { name: 'Set live' }).press('Enter');
    await page.getByRole('status').filter({ hasText: 'The automation is live.' }).waitFor();
    await page.getByLabel('Runs for', { exact: true }).selectOption({ label: 'Contact type: Newsletter subscribers' });
    await page.getByRole('button', { name: 'Save changes' }).press('Enter');
    await page.getByRole('alert').filter({ hasText: 'pause it first' }).waitFor();
    assert.equal(await page.getByRole('status').filter({ hasText: /\S/ }).count(), 0, 'no success note beside the refusal');

    // The contact types: a refused name, then one added.
    await page.goto(`${h.base}/app/contacts`);
    await page.getByRole('button', { name: 'Add contact type' }).click();
    await page.getByRole('alert').waitFor();
    assert.equal(await page.getByLabel('New contact type').getAttribute('aria-invalid'), 'true');
    await page.getByLabel('New contact type').fill('Trade show leads');
    await page.getByRole('button', { name: 'Add contact type' }).click();
    await page.getByRole('status').filter({ hasText: 'Contact type “Trade show leads” added.' }).waitFor();
    assert.equal(await page.getByRole('alert').count(), 0);
    assert.equal(await page.getByLabel('New contact type').getAttribute('aria-invalid'), null);
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });
});
