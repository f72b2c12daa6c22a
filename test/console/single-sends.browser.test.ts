/**
 * The single sends section in a real browser (see browser.ts for the harness): compose a draft,
 * send a test, review the recipient count, send, follow the report (opens, clicks, links),
 * schedule in a time zone; plus the console's time-zone conversion against the service's.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { drainQueue, make, type Client, type TestContext } from '../helpers.js';
import { SmtpSink } from '../support/smtp-sink.js';
import { senderForm } from '../modules/senders.helpers.js';
import { zonedToUtc as serverZonedToUtc } from '../../src/modules/single-sends/single-sends.rules.js';
import { zonedToUtc } from '../../web/src/pages/single-sends/time.js';
import { skipWithoutChromium, startConsole, type ConsoleHarness } from './browser.js';
import { press } from './single-sends.helpers.js';

const XSS = '<img src=x onerror="window.__xss=1;alert(1)">Spring';
const LINK = 'https://shop.example.com/spring';
/** A design with a tracked link, saved in account a's design library before the tests. */
const LINK_DESIGN = JSON.stringify({
  tagName: 'mjml',
  attributes: {},
  children: [
    {
      tagName: 'mj-body',
      attributes: {},
      children: [
        {
          tagName: 'mj-section',
          attributes: {},
          children: [
            {
              tagName: 'mj-column',
              attributes: {},
              children: [
                { tagName: 'mj-text', attributes: {}, content: '<p>Hello ((first_name))</p>' },
                { tagName: 'mj-button', attributes: { href: LINK }, content: 'Shop the spring' },
              ],
            },
          ],
        },
      ],
    },
  ],
});

describe('the console’s time-zone conversion', () => {
  it('gives the UTC moment the service computes, summer time and its gaps included', () => {
    const cases: Array<[string, string, string]> = [
      ['2031-01-15', '09:30', 'Europe/Berlin'],
      ['2031-07-01', '09:30', 'America/New_York'],
      ['2031-03-30', '02:30', 'Europe/Berlin'], // does not exist: 03:30 CEST
      ['2031-10-26', '02:30', 'Europe/Berlin'], // twice: the first
      ['2031-11-02', '01:30', 'America/New_York'],
      ['2031-01-01', '00:00', 'Asia/Kolkata'],
      ['2031-04-06', '01:45', 'Australia/Lord_Howe'],
      ['2031-06-01', '12:00', 'UTC'],
    ];
    for (const [date, time, zone] of cases)
      assert.equal(
        zonedToUtc(date, time, zone).toISOString(),
        serverZonedToUtc(date, `${time}:00`, zone).toISOString(),
        `${date} ${time} ${zone}`,
      );
    assert.equal(zonedToUtc('2031-07-01', '09:30', 'America/New_York').toISOString(), '2031-07-01T13:30:00.000Z');
    assert.equal(zonedToUtc('2031-03-30', '02:30', 'Europe/Berlin').toISOString(), '2031-03-30T01:30:00.000Z');
  });
});

describe('single sends in chromium', { skip: skipWithoutChromium }, () => {
  let h: ConsoleHarness;
  let t: TestContext;
  let sink: SmtpSink;
  let typeId: number;
  let sendUtr = '';

  async function verifiedSender(c: Client, extra: Record<string, unknown> = {}): Promise<number> {
    const r = await c.post('/sender/save', senderForm(extra));
    assert.equal(r.status, 200, r.text);
    await t.database.db.updateTable('senders').set({ is_verified: 1 }).where('id', '=', r.body.id).execute();
    return r.body.id;
  }

  /** The design picker has loaded its list and shows a preview: the form's layout no longer moves. */
  async function designLoaded(page: Page) {
    await page.locator('iframe.design-preview').waitFor();
    await page.frameLocator('iframe.design-preview').locator('body').waitFor({ state: 'attached' });
  }

  /** From the overview to an empty composer, as a person goes there. */
  async function openComposer(page: Page) {
    await page.getByRole('navigation').getByRole('link', { name: 'Single sends' }).click();
    await page.getByRole('heading', { level: 1, name: 'Single sends' }).waitFor();
    await page.getByRole('link', { name: 'New single send' }).click();
  }

  before(async () => {
    sink = await SmtpSink.start();
    h = await startConsole({ smtpUrl: sink.url });
    t = h.t;
    await verifiedSender(t.a, { from_name: 'Acme News' });
    const unverified = await t.a.post('/sender/save', senderForm({ from_name: 'Pending Sender', from_email: 'pending@example.com' }));
    assert.equal(unverified.status, 200, unverified.text);
    typeId = await make.contactType(t.a, 'Customers');
    for (const [email, first_name] of [
      ['ann@example.com', 'Ann'],
      ['bob@example.com', 'Bob'],
      ['cy@example.com', 'Cy'],
    ])
      await make.contact(t.a, { contact_type_id: typeId, email, first_name });
    assert.equal(
      (await t.a.post('/unsubscribes-groups/save', { group_name: 'Newsletter', description: 'News', is_display: 1 })).status,
      200,
    );
    const design = await t.a.post('/designs/create', { name: 'Spring with a link', template_json: LINK_DESIGN });
    assert.equal(design.status, 200, design.text);
    // Another account's send, which account a must never see.
    const bSender = await verifiedSender(t.b);
    const bGroup = (await t.b.post('/unsubscribes-groups/save', { group_name: 'B news', description: 'B', is_display: 1 })).body.id;
    const bType = await make.contactType(t.b, 'B people');
    const b = await t.b.post('/single/send/create', {
      template_id: 2,
      sender_id: bSender,
      unsubscribe_group_id: bGroup,
      single_send_name: 'Secret of account B',
      subject: 'B',
      preheader: 'B',
      recipient_id: [`contacts_${bType}`],
      schedule_type: 1,
      schedule_date: '2040-01-01',
      schedule_time: '10:00',
    });
    assert.equal(b.status, 200, b.text);
    await drainQueue(t); // the senders' verification mails
    sink.clear();
  });
  after(async () => {
    await h?.close();
    await sink?.close();
  });

  it('composes a draft, sends a test, reviews the recipient count and sends now; the report follows', async () => {
    const { context, page, problems } = await h.open();
    await h.signIn(page);
    await page.getByRole('navigation').getByRole('link', { name: 'Single sends' }).click();
    await page.getByRole('heading', { level: 1, name: 'Single sends' }).waitFor();
    await page.getByRole('cell', { name: 'No single sends yet.' }).waitFor();
    assert.equal(await page.getByText('Secret of account B').count(), 0);

    await page.getByRole('link', { name: 'New single send' }).click();
    await page.getByRole('heading', { level: 1, name: 'New single send' }).waitFor();
    await designLoaded(page);
    await page.getByLabel('Name').fill(XSS);
    const sender = page.getByLabel('Sender');
    assert.equal(await sender.locator('option:checked').textContent(), `Acme News <${(await senderOf(t.a, 'Acme News')).from_email}>`);
    assert.equal(await sender.locator('option', { hasText: 'Pending Sender' }).isDisabled(), true);
    assert.match((await sender.locator('option', { hasText: 'Pending Sender' }).textContent()) ?? '', /\(not verified\)$/);
    await page.getByRole('group', { name: 'Recipients' }).getByLabel('All contacts of Customers').check();
    assert.equal(await page.getByRole('group', { name: 'Exclude' }).getByLabel('All contacts of Customers').isChecked(), false);
    await page.getByLabel('Design').selectOption({ label: 'Spring with a link' });
    await page.getByLabel('Subject').fill('Spring for ((first_name))');
    await page.getByLabel('Preheader').fill('What is new');
    await page.getByLabel('Unsubscribe group').selectOption({ label: 'Newsletter' });
    assert.equal(await page.getByRole('radio', { name: 'Send now' }).isChecked(), true);
    await page.frameLocator('iframe.design-preview').getByText('Shop the spring').waitFor();
    assert.deepEqual(await h.axeViolations(page), []);
    await h.shot(page, 'single-send-composer');

    await press(page.getByRole('button', { name: 'Save draft' }));
    await page.getByRole('status').filter({ hasText: 'Draft saved.' }).waitFor();
    await designLoaded(page);
    await page.getByRole('heading', { level: 1, name: XSS }).waitFor();
    sendUtr = /\/app\/single-sends\/([0-9a-f-]{36})\/edit/.exec(page.url())![1];
    let d = (await t.a.get('/single-send/details', { utr: sendUtr })).body.message.singleSend[0];
    assert.deepEqual(
      [d.status, d.single_send_name, d.template_id, d.recipient_id],
      [0, XSS, 1, [{ id: String(typeId), table: 'contacts' }]],
    );
    assert.equal(JSON.parse(d.template_json).tagName, 'mjml');

    // A test to one address: the queue sends it with the subject prefixed.
    await page.getByLabel('Test addresses').fill('tester@example.com');
    await press(page.getByRole('button', { name: 'Send test' }));
    await page.getByRole('status').filter({ hasText: 'Test sent to tester@example.com.' }).waitFor();
    await drainQueue(t);
    const test = await sink.waitFor((m) => m.envelope.to.includes('tester@example.com'));
    // Filled with the first recipient's data, as the composer says beside the button.
    assert.equal(test.subject, '[Test] Spring for Ann');
    assert.equal((await t.a.get('/single-send/details', { utr: sendUtr })).body.message.singleSend[0].status, 0);

    await press(page.getByRole('button', { name: 'Review and send' }));
    await page.getByText('This will be sent to 3 recipients now.').waitFor();
    assert.deepEqual(await h.axeViolations(page), []);
    await h.shot(page, 'single-send-review');
    await press(page.getByRole('button', { name: 'Cancel' }));
    await press(page.getByRole('button', { name: 'Review and send' }));
    await press(page.getByRole('button', { name: 'Send now' }));

    // The report: ready, then (the worker runs) sent, without a reload.
    await page.getByRole('heading', { level: 1, name: XSS }).waitFor();
    await page.waitForURL(`**/app/single-sends/${sendUtr}`);
    d = (await t.a.get('/single-send/details', { utr: sendUtr })).body.message.singleSend[0];
    assert.equal(d.status, 1);
    await drainQueue(t);
    await page.getByText('Status: Sent').waitFor({ timeout: 10_000 });
    const received = await sink.waitFor((m) => m.envelope.to.includes('ann@example.com'));
    assert.equal(received.subject, 'Spring for Ann');

    // Ann opens the message and clicks its link.
    const pixel = /http:\/\/localhost:3000(\/t\/open\/[^"]+\.gif)/.exec(received.html ?? '')![1];
    const click = /http:\/\/localhost:3000(\/t\/click\/[^"]+)"/.exec(received.html ?? '')![1];
    assert.equal((await fetch(h.base + pixel)).status, 200);
    const redirect = await fetch(h.base + click, { redirect: 'manual' });
    assert.equal(redirect.status, 302);
    assert.equal(redirect.headers.get('location'), LINK);
    // Apple's proxy fetches the image (a machine open); a gateway follows the link with no agent (a scanner click).
    assert.equal((await fetch(h.base + pixel, { headers: { 'user-agent': 'Mozilla/5.0' } })).status, 200);
    assert.equal((await fetch(h.base + click, { redirect: 'manual', headers: { 'user-agent': '' } })).status, 302);

    await page.reload();
    await page.getByRole('heading', { level: 1, name: XSS }).waitFor();
    const figure = (label: string) =>
      page
        .locator('dl.figures div')
        .filter({ has: page.getByText(label, { exact: true }) })
        .locator('dd');
    assert.equal(await figure('Delivered').textContent(), '3');
    assert.equal(await figure('Unique opens').textContent(), '1');
    assert.equal(await figure('Unique clicks').textContent(), '1');
    assert.equal(await figure('Total opens').textContent(), '2');
    assert.equal(await figure('Opens by people').textContent(), '1');
    assert.equal(await figure('Machine opens').textContent(), '1');
    assert.equal(await figure('Total clicks').textContent(), '1');
    assert.equal(await figure('Scanner clicks').textContent(), '1');
    assert.equal(await figure('Bounces').textContent(), '0');
    assert.equal(await figure('Spam reports').textContent(), '0');
    assert.equal(await figure('Unsubscribes').textContent(), '0');
    const linkRow = page.getByRole('row', { name: new RegExp(LINK.replace(/[.]/g, '\\.')) });
    assert.match(await linkRow.innerText(), /https:\/\/shop\.example\.com\/spring\s+1\s+1/);
    await page.locator('.chart canvas').waitFor();
    assert.equal(await page.getByRole('img', { name: /per hour/ }).count(), 1);
    assert.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined);
    assert.equal(await page.locator('main img').count(), 0);
    assert.deepEqual(await h.axeViolations(page), []);
    await h.shot(page, 'single-send-report');

    // The list: the send with its status and figures, and not account B's.
    await page.getByRole('link', { name: '← Single sends' }).click();
    await page.getByRole('heading', { level: 1, name: 'Single sends' }).waitFor();
    const row = page.getByRole('row', { name: new RegExp('Spring') });
    assert.match(await row.innerText(), /Sent\s+At once\s+3\s+1\s+1\s+0/);
    assert.equal(await page.getByText('Secret of account B').count(), 0);
    assert.deepEqual(await h.axeViolations(page), []);
    await h.shot(page, 'single-sends');

    // The overview shows the same people's opens, machine opens and scanner clicks.
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.locator('dl.figures').waitFor();
    assert.equal(await figure('Opens by people').textContent(), '1');
    assert.equal(await figure('Machine opens').textContent(), '1');
    assert.equal(await figure('Scanner clicks').textContent(), '1');
    assert.deepEqual(await h.axeViolations(page), []);
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('schedules a send in a chosen time zone: the API holds the right UTC moment', async () => {
    const { context, page, problems } = await h.open();
    await h.signIn(page);
    await openComposer(page);
    await page.getByRole('heading', { level: 1, name: 'New single send' }).waitFor();
    await designLoaded(page);
    await page.getByLabel('Name').fill('Summer schedule');
    await page.getByRole('group', { name: 'Recipients' }).getByLabel('All contacts of Customers').check();
    await page.getByLabel('Design').selectOption({ label: 'Newsletter' });
    await page.getByTitle('Preview of Newsletter').waitFor();
    await page.getByLabel('Subject').fill('Summer');
    await page.getByLabel('Preheader').fill('Soon');
    await page.getByRole('radio', { name: 'Schedule' }).scrollIntoViewIfNeeded();
    await page.getByRole('radio', { name: 'Schedule' }).check();
    await page.getByLabel('Date').fill('2031-07-01');
    await page.getByLabel('Time', { exact: true }).fill('09:30');
    await page.getByLabel('Time zone').selectOption('America/New_York');
    await page.getByText('That is 2031-07-01 13:30 UTC.').waitFor();
    await press(page.getByRole('button', { name: 'Save draft' }));
    await page.getByRole('status').filter({ hasText: 'Draft saved.' }).waitFor();
    await designLoaded(page);
    const utr = /\/app\/single-sends\/([0-9a-f-]{36})\/edit/.exec(page.url())![1];
    // The saved draft comes back in the composer as it was given.
    assert.equal(await page.getByLabel('Time zone').inputValue(), 'America/New_York');
    assert.equal(await page.getByLabel('Date').inputValue(), '2031-07-01');
    await press(page.getByRole('button', { name: 'Review and send' }));
    await page.getByText('This will be sent to 3 recipients on 2031-07-01 at 09:30 America/New_York (2031-07-01 13:30 UTC).').waitFor();
    await press(page.getByRole('button', { name: 'Schedule', exact: true }));
    await page.waitForURL(`**/app/single-sends/${utr}`);
    await page.getByText('Status: Scheduled').waitFor();

    const d = (await t.a.get('/single-send/details', { utr })).body.message.singleSend[0];
    assert.deepEqual(
      [d.status, d.schedule_type, d.schedule_date, d.schedule_time, d.timezone, d.template_id, d.template_json],
      [1, 1, '2031-07-01', '09:30:00', 'America/New_York', 2, null],
    );
    const row = await t.database.db.selectFrom('single_sends').select('due_at').where('utr', '=', utr).executeTakeFirstOrThrow();
    assert.equal(row.due_at, '2031-07-01T13:30:00.000000Z');

    // Listed as scheduled, in its zone; a scheduled send can still be edited, duplicated and deleted.
    await page.getByRole('link', { name: '← Single sends' }).click();
    const listed = page.getByRole('row', { name: /Summer schedule/ });
    assert.match(await listed.innerText(), /Scheduled\s+2031-07-01 09:30 America\/New_York/);
    await listed.getByRole('button', { name: 'Duplicate Summer schedule' }).click();
    await page.getByRole('status').filter({ hasText: '“Summer schedule” duplicated as a draft.' }).waitFor();
    const copy = page.getByRole('row', { name: /Summer schedule \(copy\)/ });
    assert.match(await copy.innerText(), /Draft/);
    await copy.getByRole('button', { name: 'Delete Summer schedule (copy)' }).click();
    await copy.getByRole('button', { name: 'Yes, delete Summer schedule (copy)' }).click();
    await page.getByRole('status').filter({ hasText: '“Summer schedule (copy)” deleted.' }).waitFor();
    assert.equal(await page.getByRole('row', { name: /Summer schedule \(copy\)/ }).count(), 0);
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('shows field errors from the API, and Page not found for an unknown sub-page', async () => {
    const { context, page, problems } = await h.open();
    await h.signIn(page);
    await openComposer(page);
    await page.getByRole('heading', { level: 1, name: 'New single send' }).waitFor();
    await designLoaded(page);
    await page.getByLabel('Subject').fill('No name');
    await press(page.getByRole('button', { name: 'Save draft' }));
    await page.getByRole('alert').waitFor();
    assert.match((await page.getByRole('alert').textContent()) ?? '', /The single send name field is required\./);
    assert.equal(await page.getByLabel('Name').getAttribute('aria-invalid'), 'true');
    await page.goto(`${h.base}/app/single-sends/nope/x`);
    await page.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor();
    // Another account's send is not found either.
    const bList = (await t.b.get('/single-send/list')).body.message.singleSends;
    await page.goto(`${h.base}/app/single-sends/${bList[0].utr}`);
    await page.getByRole('alert').filter({ hasText: 'Record not found' }).waitFor();
    assert.equal(await page.getByText('Secret of account B').count(), 0);
    assert.deepEqual(
      problems.filter((p) => !/status of 4(04|22)/.test(p)),
      [],
    );
    await context.close();
  });

  it('fits a phone-sized screen: list, composer and report scroll no page sideways', async () => {
    const { context, page, problems } = await h.open({ viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true });
    await h.signIn(page);
    for (const [path, heading] of [
      ['/app/single-sends', 'Single sends'],
      ['/app/single-sends/new', 'New single send'],
      [`/app/single-sends/${sendUtr}`, XSS],
    ]) {
      await page.goto(h.base + path);
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      await page.getByText('Loading…').waitFor({ state: 'detached' });
      const w = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
      assert.ok(w.scroll <= w.client, `${path} wider than the screen: ${w.scroll} > ${w.client}`);
    }
    await h.shot(page, 'single-send-report-phone');
    assert.deepEqual(problems, []);
    await context.close();
  });

  async function senderOf(c: Client, name: string): Promise<{ from_email: string }> {
    const r = await c.get('/senders');
    return r.body.message.senders.find((s: { from_name: string }) => s.from_name === name);
  }
});
