/**
 * The console's Automations section in a real browser (see browser.ts for the harness): create a
 * custom automation, its emails, set live (refused, then accepted), figures after the queue ran,
 * pause, edit, test send, duplicate and delete; another account's automations stay out; a name
 * holding markup shows as text.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { drainQueue, make, type Client, type TestContext } from '../helpers.js';
import { senderForm } from '../modules/senders.helpers.js';
import { skipWithoutChromium, startConsole, type ConsoleHarness } from './browser.js';

describe('the console: automations', { skip: skipWithoutChromium }, () => {
  let h: ConsoleHarness;
  let t: TestContext;
  let base: string;

  /** Saves a sender (verified when asked, as opening its mailed link does); returns its id. */
  async function sender(c: Client, fromName: string, verified: boolean): Promise<number> {
    const r = await c.post('/sender/save', senderForm({ from_name: fromName }));
    assert.equal(r.status, 200, r.text);
    if (verified) await t.database.db.updateTable('senders').set({ is_verified: 1 }).where('id', '=', r.body.id).execute();
    return r.body.id;
  }

  async function group(c: Client, name: string): Promise<number> {
    const r = await c.post('/unsubscribes-groups/save', { group_name: name, description: 'News', is_display: 1 });
    assert.equal(r.status, 200, r.text);
    return r.body.id;
  }

  async function automations(c: Client): Promise<Array<Record<string, any>>> {
    const r = await c.get('/automations');
    assert.equal(r.status, 200, r.text);
    return r.body.message.automations;
  }

  /** The API answers of 400 and above that the page gets, as `<status> <path>`. */
  function failures(page: Page): string[] {
    const failed: string[] = [];
    page.on('response', (r) => {
      if (r.status() >= 400) failed.push(`${r.status()} ${new URL(r.url()).pathname}`);
    });
    return failed;
  }

  before(async () => {
    h = await startConsole();
    t = h.t;
    base = h.base;
  });
  after(async () => {
    await h?.close();
  });

  it('creates a custom automation, adds its emails, sets it live, shows its figures, pauses, edits, duplicates and deletes it', async () => {
    await sender(t.a, 'Acme News', true);
    await sender(t.a, 'Unchecked Sender', false);
    await group(t.a, 'Newsletter');
    const members = await make.contactType(t.a, 'Members');
    await make.contactType(t.a, 'Others');
    await make.contact(t.a, { contact_type_id: members, email: 'member@example.com', first_name: 'Mia' });
    // Another account's automation, which must not be listed.
    const bType = await make.contactType(t.b, 'B people');
    const bGroup = await group(t.b, 'B group');
    const bCreate = await t.b.post('/automations/create', {
      type: 'welcome',
      automation_for: `contacts_${bType}`,
      automation_name: 'Secret of account B',
      unsubscribe_group_id: bGroup,
    });
    assert.equal(bCreate.status, 200, bCreate.text);

    const { context, page, problems } = await h.open();
    const failed = failures(page);
    await h.signIn(page);
    await page.getByRole('navigation').getByRole('link', { name: 'Automations' }).click();
    await page.getByRole('heading', { level: 1, name: 'Automations' }).waitFor();
    await page.getByRole('cell', { name: 'No automations yet. Create the first one.' }).waitFor();
    assert.deepEqual(await h.axeViolations(page), []);

    // Create.
    await page.getByRole('link', { name: 'New automation' }).click();
    await page.getByRole('heading', { level: 1, name: 'New automation' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Onboarding');
    await page.getByLabel('Type', { exact: true }).selectOption({ label: 'Custom' });
    await page.getByLabel('Runs for', { exact: true }).selectOption({ label: 'Contact type: Members' });
    await page.getByLabel('Unsubscribe group', { exact: true }).selectOption({ label: 'Newsletter' });
    assert.deepEqual(await h.axeViolations(page), []);
    await h.shot(page, 'automation-new');
    await page.getByRole('button', { name: 'Create automation' }).click();
    await page.getByRole('heading', { level: 1, name: 'Onboarding' }).waitFor();
    const [created] = await automations(t.a);
    assert.deepEqual(
      [created.automation_name, created.automation_type, created.automation_for, created.automation_for_table, created.status],
      ['Onboarding', 2, members, 'contacts', 0],
    );
    assert.ok(page.url().endsWith(`/app/automations/${created.utr}`));
    const utr: string = created.utr;

    // Set live without an email: the API's reason in the alert.
    await page.getByRole('button', { name: 'Set live' }).click();
    await page.getByRole('alert').filter({ hasText: 'Add at least one email to live automation' }).waitFor();

    // An instant email, then one two days later.
    // The automation's page holds the design preview, a sandboxed iframe: chromium routes a click made
    // right after a scroll by where the iframe was, so its buttons are pressed with the keyboard (as
    // keyboard users do), which hit-tests nothing.
    const senderSelect = page.getByLabel('Sender', { exact: true });
    assert.equal(await senderSelect.locator('option', { hasText: 'Unchecked Sender' }).isDisabled(), true);
    // Nothing is chosen for the reader: the sender, the unit and the design start at their prompts.
    assert.equal(await senderSelect.inputValue(), '');
    assert.equal(await page.getByLabel('Unit', { exact: true }).inputValue(), '');
    await senderSelect.selectOption((await senderSelect.locator('option', { hasText: 'Acme News <' }).getAttribute('value'))!);
    await page.getByLabel('Subject', { exact: true }).fill('Welcome aboard, ((first_name))');
    await page.getByLabel('Unit', { exact: true }).selectOption({ label: 'Instantly' });
    assert.equal(await page.getByLabel('Wait', { exact: true }).isDisabled(), true);
    await page.getByLabel('Design', { exact: true }).selectOption({ label: 'Welcome' });
    await page.getByRole('button', { name: 'Add email' }).press('Enter');
    await page.getByRole('status').filter({ hasText: 'Email “Welcome aboard, ((first_name))” added.' }).waitFor();
    await page.getByLabel('Subject', { exact: true }).fill('Two days in');
    await page.getByLabel('Unit', { exact: true }).selectOption({ label: 'Days' });
    await page.getByLabel('Wait', { exact: true }).fill('2');
    await page.getByLabel('Design', { exact: true }).selectOption({ label: 'Newsletter' });
    await page.getByRole('button', { name: 'Add email' }).press('Enter');
    await page.getByRole('status').filter({ hasText: 'Email “Two days in” added.' }).waitFor();
    const rows = page.getByRole('region', { name: 'Emails' }).getByRole('row');
    assert.match(
      await rows.nth(1).innerText(),
      /1\s+Welcome aboard, \(\(first_name\)\)\s+Acme News <.+>\s+Instantly after joining\s+Welcome · Preview/,
    );
    assert.match(
      await rows.nth(2).innerText(),
      /2\s+Two days in\s+Acme News <.+>\s+2 days after the previous email\s+Newsletter · Preview/,
    );
    const schedules = (await t.a.get('/automations/schedule', { utr })).body.message.automation_schedules;
    assert.deepEqual(
      schedules.map((s: any) => [s.subject, s.waiting_period, s.waiting_type, s.template_id]),
      [
        ['Welcome aboard, ((first_name))', 1, 'instantly', 4],
        ['Two days in', 2, 'days', 2],
      ],
    );
    const preview = rows.nth(1).getByRole('link', { name: /^Preview/ });
    assert.equal(await preview.getAttribute('href'), schedules[0].design_url);
    assert.equal(await preview.getAttribute('target'), '_blank');

    // A test of the second email.
    await page.getByLabel('Email to test', { exact: true }).selectOption({ label: '2. Two days in' });
    await page.getByLabel('Test addresses', { exact: true }).fill('qa@example.com');
    await page.getByRole('button', { name: 'Send test' }).press('Enter');
    await page.getByRole('status').filter({ hasText: 'Test sent to qa@example.com.' }).waitFor();

    // Live: the member is enrolled, the queue sends the first email, the figures show it.
    await page.getByRole('button', { name: 'Set live' }).press('Enter');
    await page.getByRole('status').filter({ hasText: 'The automation is live.' }).waitFor();
    await page.getByRole('heading', { level: 2, name: 'Status: Live' }).waitFor();
    assert.equal((await automations(t.a))[0].status, 1);
    assert.ok((await drainQueue(t)) >= 1);
    assert.equal((await t.a.get('/automations/details', { utr })).body.message.automation.total_triggered, 1);
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Onboarding' }).waitFor();
    const figure = (label: string) =>
      page
        .locator('.figures div')
        .filter({ has: page.getByText(label, { exact: true }) })
        .locator('dd');
    await page.locator('.figures').waitFor();
    assert.equal(await figure('Triggered').textContent(), '1');
    for (const label of ['Delivered', 'Unique opens', 'Unique clicks', 'Bounces', 'Unsubscribes']) await figure(label).waitFor();
    // People's opens apart from machines', and scanners' clicks apart.
    for (const label of ['Opens by people', 'Machine opens', 'Scanner clicks']) assert.equal(await figure(label).textContent(), '0');
    assert.deepEqual(await h.axeViolations(page), []);
    await h.shot(page, 'automation');

    // A live automation keeps its target: the API's reason in the alert.
    await page.getByLabel('Runs for', { exact: true }).selectOption({ label: 'Contact type: Others' });
    await page.getByRole('button', { name: 'Save changes' }).press('Enter');
    await page
      .getByRole('alert')
      .filter({ hasText: 'A live automation cannot change its contact type or segment: pause it first' })
      .waitFor();

    // Pause, then rename.
    await page.getByRole('button', { name: 'Pause' }).press('Enter');
    await page.getByRole('status').filter({ hasText: 'The automation is paused.' }).waitFor();
    await page.getByRole('heading', { level: 2, name: 'Status: Paused' }).waitFor();
    const paused = (await t.a.get('/automations/details', { utr })).body.message.automation;
    assert.equal(paused.status, 0);
    assert.notEqual(paused.live_at, null);
    await page.getByLabel('Runs for', { exact: true }).selectOption({ label: 'Contact type: Members' });
    await page.getByLabel('Name', { exact: true }).fill('Onboarding v2');
    await page.getByRole('button', { name: 'Save changes' }).press('Enter');
    await page.getByRole('status').filter({ hasText: 'Changes saved.' }).waitFor();
    await page.getByRole('heading', { level: 1, name: 'Onboarding v2' }).waitFor();
    assert.equal((await t.a.get('/automations/details', { utr })).body.message.automation.automation_name, 'Onboarding v2');

    // Delete the second email, with an inline confirmation.
    await rows.nth(2).getByRole('button', { name: 'Delete “Two days in”' }).press('Enter');
    await page.getByRole('button', { name: 'Delete this email' }).press('Enter');
    await page.getByRole('status').filter({ hasText: 'Email “Two days in” deleted.' }).waitFor();
    assert.equal((await t.a.get('/automations/schedule', { utr })).body.message.automation_schedules.length, 1);

    // The list: figures and status in words; duplicate; delete the copy.
    await page.getByRole('link', { name: '← Automations' }).press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Automations' }).waitFor();
    const row = page.getByRole('row', { name: /Onboarding v2/ });
    // The clicks are read from each automation's statistics after the list (the row first: an
    // empty table has no '…' either).
    await row.waitFor();
    await page.waitForFunction(() => !document.querySelector('main tbody')?.textContent?.includes('…'));
    assert.match(
      await row.innerText(),
      /Onboarding v2\s+Custom\s+Contact type: Members\s+Paused\s+1\s+1\s+\d+\s+0\s+0\s+Duplicate\s+Delete/,
    );
    assert.equal(await page.getByText('Secret of account B').count(), 0);
    assert.deepEqual(await h.axeViolations(page), []);
    await h.shot(page, 'automations-list');
    await row.getByRole('button', { name: 'Duplicate' }).click();
    await page.getByRole('heading', { level: 1, name: 'Onboarding v2 (copy)' }).waitFor();
    const copy = (await automations(t.a)).find((a) => a.automation_name === 'Onboarding v2 (copy)')!;
    assert.deepEqual([copy.status, copy.live_at, copy.automation_schedule_count], [0, null, 1]);
    await page.getByRole('link', { name: '← Automations' }).press('Enter');
    const copyRow = page.getByRole('row', { name: /Onboarding v2 \(copy\)/ });
    await copyRow.getByRole('button', { name: 'Delete' }).click();
    await copyRow.getByRole('button', { name: 'Delete for good' }).click();
    await page.getByRole('status').filter({ hasText: 'Automation “Onboarding v2 (copy)” deleted.' }).waitFor();
    assert.deepEqual(
      (await automations(t.a)).map((a) => a.automation_name),
      ['Onboarding v2'],
    );
    await copyRow.waitFor({ state: 'detached' });

    // The console errors are the failed answers expected: the two refusals shown above.
    assert.deepEqual([...new Set(failed)].sort(), ['409 /automations/update', '422 /automations/set-live']);
    assert.deepEqual(
      problems.filter((p) => !/^console: Failed to load resource: the server responded with a status of (409|422) /.test(p)),
      [],
    );
    await context.close();
  });

  it('fits a phone-sized screen: no sideways scroll on the list and on an automation with emails', async () => {
    const list = await automations(t.a);
    const utr = list.find((a) => a.automation_name === 'Onboarding v2')!.utr;
    const { context, page, problems } = await h.open({
      viewport: { width: 360, height: 740 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
    });
    await h.signIn(page);
    const widths = () =>
      page.evaluate(() => ({
        scroll: document.documentElement.scrollWidth,
        client: document.documentElement.clientWidth,
        // What sticks out, to name it when the check fails.
        wide: [...document.querySelectorAll('main *')]
          .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
          .slice(0, 5)
          .map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.className}`),
      }));
    for (const [path, heading, name] of [
      ['/app/automations', 'Automations', 'automations-phone'],
      [`/app/automations/${utr}`, 'Onboarding v2', 'automation-phone'],
    ]) {
      await page.goto(`${base}${path}`);
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      await page.getByRole('cell').first().waitFor();
      const w = await widths();
      assert.ok(w.scroll <= w.client, `${path} wider than the screen: ${w.scroll} > ${w.client}: ${w.wide.join(', ')}`);
      await h.shot(page, name);
    }
    assert.deepEqual(
      problems.filter((p) => !p.includes('404')),
      [],
    );
    await context.close();
  });

  it('shows an XSS payload in a name as text, and an unknown automation as not found', async () => {
    const payload = '<img src=x onerror="window.__xss=1;alert(1)"><script>window.__xss=2</script>';
    const type = await make.contactType(t.a, 'XSS people');
    const groupId = await group(t.a, 'XSS group');
    const r = await t.a.post('/automations/create', {
      type: 'welcome',
      automation_for: `contacts_${type}`,
      automation_name: payload,
      unsubscribe_group_id: groupId,
    });
    assert.equal(r.status, 200, r.text);
    const { context, page, problems } = await h.open();
    const failed = failures(page);
    await h.signIn(page);
    await page.goto(`${base}/app/automations`);
    const link = page.getByRole('link', { name: payload });
    await link.click();
    await page.getByRole('heading', { level: 1, name: payload }).waitFor();
    assert.equal(await page.getByLabel('Name', { exact: true }).inputValue(), payload);
    assert.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined);
    assert.equal(await page.locator('main img, main script').count(), 0);

    await page.goto(`${base}/app/automations/00000000-0000-4000-8000-000000000000`);
    await page.getByRole('heading', { level: 1, name: 'Automation not found' }).waitFor();
    assert.equal(await page.getByRole('alert').textContent(), 'Record Not Found');
    await page.goto(`${base}/app/automations/a/b`);
    await page.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor();
    // The 404 of the unknown automation is the console error expected here.
    assert.deepEqual([...new Set(failed)].sort(), ['404 /automations/details']);
    assert.deepEqual(
      problems.filter((p) => !p.includes('404')),
      [],
    );
    await context.close();
  });
});
