/**
 * A new account's first newsletter, end to end in chromium, through the console only, against a
 * real SMTP sink: a sender added and verified through the link it is mailed, an unsubscribe group,
 * a contact type, 1,000 contacts imported by dropping a CSV on the drop zone, a segment built with
 * its live count, a design made in the editor, a test send, the send, and the report showing the
 * open and the click a recipient made in the mail received.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { drainQueue, type TestContext } from '../helpers.js';
import { SmtpSink } from '../support/smtp-sink.js';
import { dropFile, skipWithoutChromium, startConsole, type ConsoleHarness } from './browser.js';

const LINK = 'https://shop.example.com/autumn';

describe('the console: a first newsletter from sign-in to its report', { skip: skipWithoutChromium }, () => {
  let h: ConsoleHarness;
  let t: TestContext;
  let sink: SmtpSink;

  before(async () => {
    sink = await SmtpSink.start();
    h = await startConsole({ smtpUrl: sink.url });
    t = h.t;
  });
  after(async () => {
    await h?.close();
    await sink?.close();
  });

  it('signs in, sets up, imports, segments, designs, tests, sends, and reports 1 open and 1 click', async () => {
    const { context, page, problems } = await h.open();
    const nav = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();
    const status = (text: string) => page.getByRole('status').filter({ hasText: text }).waitFor();
    await h.signIn(page);

    // A sender, verified through the link mailed to it.
    await nav('Settings');
    await page.getByRole('main').getByRole('link', { name: 'Senders', exact: true }).click();
    await page.getByLabel('Nickname').fill('News');
    await page.getByLabel('From name').fill('Autumn News');
    await page.getByLabel('From email').fill('news@shop.example.com');
    await page.getByLabel('Reply-to email').fill('reply@shop.example.com');
    await page.getByLabel('Company address', { exact: true }).fill('1 Market Street');
    await page.getByLabel('Country').selectOption({ label: 'India' });
    await page.getByRole('button', { name: 'Add sender' }).click();
    await page
      .getByRole('row', { name: /Autumn News/ })
      .getByText('Not verified')
      .waitFor();
    await drainQueue(t);
    const verification = await sink.waitFor((m) => m.envelope.to.includes('news@shop.example.com'));
    const verify = /https?:\/\/[^/\s"]+(\/sender\/verify\?token=[^\s"<]+)/.exec(verification.text ?? verification.html ?? '')![1];
    assert.equal((await fetch(h.base + verify.replace(/&amp;/g, '&'))).status, 200);
    await page.reload();
    await page
      .getByRole('row', { name: /Autumn News/ })
      .getByText('Verified', { exact: true })
      .waitFor();

    // An unsubscribe group.
    await page.getByRole('link', { name: '← Settings' }).click();
    await page.getByRole('main').getByRole('link', { name: 'Unsubscribe groups', exact: true }).click();
    await page.getByLabel('Group name').fill('Autumn letters');
    await page.getByLabel('Description').fill('Our seasonal letters');
    await page.getByRole('button', { name: 'Add group' }).click();
    await page.getByRole('link', { name: 'Autumn letters' }).waitFor();

    // A contact type, and 1,000 contacts dropped as a CSV: half in Paris, half in Lyon.
    await nav('Contacts');
    await page.getByLabel('New contact type').fill('Readers');
    await page.getByRole('button', { name: 'Add contact type' }).click();
    await status('Contact type “Readers” added.');
    await page.getByRole('link', { name: 'Import contacts' }).click();
    await page.getByLabel('Contact type').selectOption({ label: 'Readers' });
    const lines = ['first_name,last_name,email,country,city'];
    for (let i = 1; i <= 1000; i++) lines.push(`Reader${i},Number ${i},reader${i}@example.com,IN,${i % 2 ? 'Paris' : 'Lyon'}`);
    await dropFile(page, '[aria-label="Drop zone"]', 'readers.csv', lines.join('\n') + '\n');
    await page.getByRole('button', { name: 'Import' }).click();
    await status('Imported: 1000 created, 0 updated, 0 skipped.');

    // A segment of the Paris readers, counted live before it is saved.
    await nav('Segments');
    await page.getByRole('link', { name: 'New segment' }).click();
    await page.getByLabel('Segment name').fill('Paris readers');
    await page.getByLabel('Contact type').selectOption({ label: 'Readers' });
    await page.getByRole('button', { name: 'Add condition' }).click();
    const condition = page.getByRole('group', { name: 'Condition 1' });
    await condition.getByLabel('Field').selectOption('city');
    await condition.getByLabel('Operator').selectOption('is');
    await condition.getByLabel('Value', { exact: true }).fill('Paris');
    await page.locator('.live-count').filter({ hasText: '500 contacts match' }).waitFor();
    await page.getByRole('button', { name: 'Save segment' }).click();
    await page.getByRole('heading', { level: 1, name: 'Paris readers' }).waitFor();

    // A design made in the editor: a shipped design, a greeting with a placeholder, a button to the shop.
    await nav('Designs');
    await page.getByRole('link', { name: 'New design' }).click();
    await page.getByRole('link', { name: 'Start from Newsletter' }).click();
    await page.getByRole('button', { name: 'Save design', disabled: false }).waitFor();
    await page.getByLabel('Design name').fill('Autumn letter');
    const canvas = page.frameLocator('.gjs-frame');
    const blocks = page.getByRole('region', { name: 'Blocks' });
    await blocks.getByRole('button', { name: 'Text', exact: true }).click();
    const text = canvas.getByText('Insert text here');
    await text.waitFor();
    await text.dblclick();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('Hello ');
    await page.getByLabel('Placeholder').selectOption('first_name');
    await page.getByRole('button', { name: 'Insert placeholder' }).click();
    await canvas.getByText('Hello ((first_name))').waitFor();
    await blocks.getByRole('button', { name: 'Button', exact: true }).click();
    await page.getByLabel('Link address').fill(LINK);
    await page.getByRole('button', { name: 'Set link' }).click();
    await status('Link set.');
    await page.getByRole('button', { name: 'Save design' }).click();
    await status('Design saved.');

    // The send: composed, tested, reviewed with its count, sent.
    await nav('Single sends');
    await page.getByRole('link', { name: 'New single send' }).click();
    await page.getByLabel('Name').fill('Autumn in Paris');
    await page.getByLabel('Sender').selectOption({ label: 'Autumn News <news@shop.example.com>' });
    await page.getByRole('group', { name: 'Recipients' }).getByLabel('Segment Paris readers').check();
    // The design picker has its list once the preview shows; only then does the form stop moving.
    await page.locator('iframe.design-preview').waitFor();
    await page.getByLabel('Design', { exact: true }).selectOption({ label: 'Autumn letter' });
    await page.getByLabel('Subject', { exact: true }).fill('Autumn for ((first_name))');
    await page.getByLabel('Preheader').fill('What is new this autumn');
    await page.getByLabel('Unsubscribe group').selectOption({ label: 'Autumn letters' });
    await page.getByRole('button', { name: 'Save draft' }).click();
    await status('Draft saved.');
    sink.clear();
    await page.getByLabel('Test addresses').fill('editor@example.com');
    await page.getByRole('button', { name: 'Send test' }).click();
    await status('Test sent to editor@example.com.');
    await drainQueue(t);
    const test = await sink.waitFor((m) => m.envelope.to.includes('editor@example.com'));
    // Filled with the data of the send's first recipient, as the note beside the button says.
    assert.match(test.subject, /^\[Test\] Autumn for Reader\d+$/);
    await page.getByRole('button', { name: 'Review and send' }).click();
    await page.getByText('This will be sent to 500 recipients now.').waitFor();
    await page.getByRole('button', { name: 'Send now' }).click();
    // The composer's heading is the send's name too: only the report's figures say the send was accepted.
    await page.locator('dl.figures').waitFor();
    await drainQueue(t);
    await page.getByText('Status: Sent').waitFor({ timeout: 20_000 });
    assert.equal(sink.messages.filter((m) => !m.subject.startsWith('[Test]')).length, 500);

    // Reader 1 opens the mail and clicks the button.
    const received = await sink.waitFor((m) => m.envelope.to.includes('reader1@example.com'));
    assert.equal(received.subject, 'Autumn for Reader1');
    assert.match(received.html ?? '', /Hello\s+Reader1/);
    const pixel = /https?:\/\/[^/"]+(\/t\/open\/[^"]+\.gif)/.exec(received.html ?? '')![1];
    const click = /https?:\/\/[^/"]+(\/t\/click\/[^"]+)"/.exec(received.html ?? '')![1];
    assert.equal((await fetch(h.base + pixel)).status, 200);
    const redirect = await fetch(h.base + click, { redirect: 'manual' });
    assert.equal(redirect.headers.get('location'), LINK);

    // The report.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Autumn in Paris' }).waitFor();
    const figure = (label: string) =>
      page
        .locator('dl.figures div')
        .filter({ has: page.getByText(label, { exact: true }) })
        .locator('dd');
    assert.equal(await figure('Delivered').textContent(), '500');
    assert.equal(await figure('Unique opens').textContent(), '1');
    assert.equal(await figure('Unique clicks').textContent(), '1');
    assert.match(await page.getByRole('row', { name: /shop\.example\.com\/autumn/ }).innerText(), /shop\.example\.com\/autumn\s+1\s+1/);
    await page.locator('.chart canvas').waitFor();
    assert.deepEqual(await h.axeViolations(page), []);
    await h.shot(page, 'journey-report');
    assert.deepEqual(problems, []);
    await context.close();
  });
});
