/**
 * People at work in the console, end to end in chromium against a real SMTP sink: an owner invites
 * an editor (the link read from the mail the sink got), the editor accepts, signs in, builds and
 * sends a campaign, and finds no way to People or API keys; the owner sees the editor's actions in
 * the audit log and removes the editor, whose open tab is refused at its next request.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Locator, Page } from 'playwright-core';
import { drainQueue, make, type TestContext } from '../helpers.js';
import { senderForm } from '../modules/senders.helpers.js';
import { SmtpSink } from '../support/smtp-sink.js';
import { skipWithoutChromium, startConsole, type ConsoleHarness } from './browser.js';

const EDITOR = 'eddie.editor@example.com';
const PASSWORD = 'the editor chose this one';

describe('the console: an owner and an editor at work', { skip: skipWithoutChromium }, () => {
  let h: ConsoleHarness;
  let t: TestContext;
  let sink: SmtpSink;

  before(async () => {
    sink = await SmtpSink.start();
    h = await startConsole({ smtpUrl: sink.url });
    t = h.t;
    // What the account has already: a verified sender, three contacts, an unsubscribe group.
    const sender = await t.a.post('/sender/save', senderForm({ from_name: 'Acme News' }));
    assert.equal(sender.status, 200, sender.text);
    await t.database.db.updateTable('senders').set({ is_verified: 1 }).where('id', '=', sender.body.id).execute();
    const type = await make.contactType(t.a, 'Customers');
    for (const email of ['ann@example.com', 'bob@example.com', 'cy@example.com']) await make.contact(t.a, { contact_type_id: type, email });
    assert.equal(
      (await t.a.post('/unsubscribes-groups/save', { group_name: 'Newsletter', description: 'News', is_display: 1 })).status,
      200,
    );
  });
  after(async () => {
    await h?.close();
    await sink?.close();
  });

  const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name }).waitFor();
  const status = (page: Page, text: string) => page.getByRole('status').filter({ hasText: text }).waitFor();
  const nav = (page: Page) => page.getByRole('navigation', { name: 'Main' });
  /** Clicks a control once scrolled into view (a click from afar may land on the design preview's frame while the page scrolls). */
  const press = async (control: Locator) => {
    await control.scrollIntoViewIfNeeded();
    await control.click();
  };

  it('invites an editor who sends a campaign; the audit log shows it; the removed editor’s tab is refused', async () => {
    // The owner invites the editor.
    const owner = await h.open();
    await h.signIn(owner.page);
    await nav(owner.page).getByRole('link', { name: 'People' }).click();
    await heading(owner.page, 'People');
    await owner.page.getByLabel('Email', { exact: true }).fill(EDITOR);
    await owner.page.getByLabel('Role', { exact: true }).selectOption('editor');
    await owner.page.getByRole('button', { name: 'Send invitation' }).click();
    await status(owner.page, `${EDITOR} invited as editor`);

    // The invitation arrives by mail; the editor opens its link and sets a name and password.
    await drainQueue(t);
    const mail = await sink.waitFor((m) => m.envelope.to.includes(EDITOR));
    const link = /https?:\/\/\S+?(\/app\/invite\/[^\s"<>]+)/.exec(mail.text ?? '')![1];
    const editor = await h.open();
    const page = editor.page;
    await page.goto(h.base + link);
    await heading(page, 'Accept the invitation');
    await page.getByLabel('Your name').fill('Eddie Editor');
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Password again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Accept and set the password' }).click();
    await status(page, 'Welcome: your account is ready.');
    await page.getByRole('link', { name: 'Sign in' }).click();
    await h.fillSignIn(page, EDITOR, PASSWORD);
    await heading(page, 'Overview');

    // No way to People, API keys or the audit log: no entry, and their address says why.
    const links = await nav(page).getByRole('link').allTextContents();
    for (const name of ['People', 'API keys', 'Audit log']) assert.ok(!links.includes(name), `${name} in ${links}`);
    for (const path of ['/people', '/keys']) {
      await page.goto(`${h.base}/app${path}`);
      await heading(page, 'Not allowed');
      await page.getByText('Your role (editor) does not allow this page').waitFor();
    }

    // The editor builds a campaign and sends it.
    await page.goto(`${h.base}/app`);
    await nav(page).getByRole('link', { name: 'Single sends' }).click();
    await heading(page, 'Single sends');
    await page.getByRole('link', { name: 'New single send' }).click();
    await heading(page, 'New single send');
    await page.locator('iframe.design-preview').waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Spring letter');
    await page.getByRole('group', { name: 'Recipients' }).getByLabel('All contacts of Customers').check();
    await page.getByLabel('Subject', { exact: true }).fill('Spring is here');
    await page.getByLabel('Preheader', { exact: true }).fill('What is new');
    await page.getByLabel('Unsubscribe group').selectOption({ label: 'Newsletter' });
    await press(page.getByRole('button', { name: 'Save draft' }));
    await status(page, 'Draft saved.');
    await heading(page, 'Spring letter');
    // The design preview has loaded: the form's layout no longer moves under the next click.
    await page.locator('iframe.design-preview').waitFor();
    await page.frameLocator('iframe.design-preview').locator('body').waitFor({ state: 'attached' });
    const utr = /\/app\/single-sends\/([0-9a-f-]{36})\/edit/.exec(page.url())![1];
    await press(page.getByRole('button', { name: 'Review and send' }));
    const sendNow = page.getByRole('button', { name: 'Send now', exact: true });
    await sendNow.waitFor();
    assert.match(await page.getByRole('main').innerText(), /This will be sent to 3\s+recipients\s+now\./);
    await press(sendNow);
    await page.waitForURL(`**/app/single-sends/${utr}`);
    await drainQueue(t);
    await page.getByText('Status: Sent').waitFor({ timeout: 10_000 });
    await sink.waitForCount(3, (m) => m.subject === 'Spring is here');

    // The owner sees the editor's actions in the audit log.
    const editorId = ((await t.a.get('/users')).body.message.users as Array<{ id: number; email: string }>).find(
      (u) => u.email === EDITOR,
    )!.id;
    await owner.page.goto(`${h.base}/app/audit-log`);
    await heading(owner.page, 'Audit log');
    await owner.page.getByLabel('Actor type').selectOption('user');
    await owner.page.getByLabel('Actor id').fill(String(editorId));
    await owner.page.getByRole('button', { name: 'Apply filters' }).click();
    await owner.page.getByRole('cell', { name: 'session.sign_in', exact: true }).first().waitFor();
    const actions = await owner.page.locator('tbody td[data-label="Action"]').allTextContents();
    for (const action of ['session.invite_accepted', 'session.sign_in', 'POST /single/send/create', 'POST /single/send/update'])
      assert.ok(actions.includes(action), `${action} in ${actions}`);
    for (const who of await owner.page.locator('tbody td[data-label="Who"] button').allTextContents())
      assert.match(who, new RegExp(EDITOR));
    assert.deepEqual(await h.axeViolations(owner.page), []);
    await h.shot(owner.page, 'journey-people-audit');

    // The owner removes the editor; the editor's open tab is refused at its next request.
    await owner.page.goto(`${h.base}/app/people`);
    await owner.page.getByRole('button', { name: `Remove ${EDITOR}` }).click();
    await owner.page.getByRole('button', { name: 'Yes, remove' }).click();
    await status(owner.page, `${EDITOR} removed`);
    await nav(page).getByRole('link', { name: 'Contacts' }).click();
    await page.getByRole('alert').filter({ hasText: 'Your session has ended: sign in again.' }).waitFor();
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    await h.shot(page, 'journey-people-refused');

    assert.deepEqual(owner.problems, []);
    // The editor's refused requests (the 401 that ended the tab) are the only console errors.
    assert.deepEqual(
      editor.problems.filter((p) => !p.includes('status of 401')),
      [],
    );
    await owner.context.close();
    await editor.context.close();
  });
});
