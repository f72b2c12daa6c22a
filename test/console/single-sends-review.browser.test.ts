/**
 * The composer's preview, test and review in a real browser (see browser.ts for the harness): a
 * test and the preview are filled with the first recipient's data, or with a contact chosen by
 * email; the review recaps the send (sender, subject, preheader, design thumbnail, audience and
 * count, schedule), lists the design's links and warns about those that go nowhere; a queued send
 * offers no Edit. At 1280 px and at 390 px.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { drainQueue, make, type TestContext } from '../helpers.js';
import { SmtpSink } from '../support/smtp-sink.js';
import { senderForm } from '../modules/senders.helpers.js';
import { skipWithoutChromium, startConsole, type ConsoleHarness } from './browser.js';
import { fits, press } from './single-sends.helpers.js';

const WIDE = { viewport: { width: 1280, height: 900 } };
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };

const node = (tagName: string, attributes: Record<string, string>, more: { content?: string; children?: unknown[] } = {}) => ({
  tagName,
  attributes,
  ...more,
});
/** A design as the shipped ones are: a button left at `#`, a working one and a mail link. */
const AUTUMN = JSON.stringify(
  node(
    'mjml',
    {},
    {
      children: [
        node(
          'mj-body',
          {},
          {
            children: [
              node(
                'mj-section',
                {},
                {
                  children: [
                    node(
                      'mj-column',
                      {},
                      {
                        children: [
                          node('mj-text', {}, { content: '<p>Hi ((first_name)), the leaves are turning.</p>' }),
                          node('mj-button', { href: '#' }, { content: 'Read the story' }),
                          node('mj-button', { href: 'https://shop.example.com/autumn' }, { content: 'Shop the autumn' }),
                          node('mj-text', {}, { content: '<p><a href="mailto:hello@example.com">Write to us</a></p>' }),
                        ],
                      },
                    ),
                  ],
                },
              ),
            ],
          },
        ),
      ],
    },
  ),
);

describe('the composer’s preview, test and review in chromium', { skip: skipWithoutChromium }, () => {
  let h: ConsoleHarness;
  let t: TestContext;
  let sink: SmtpSink;
  let senderEmail = '';
  let draftUtr = '';

  async function openDraft(page: Page) {
    await page.goto(`${h.base}/app/single-sends/${draftUtr}/edit`);
    await page.getByRole('heading', { level: 1, name: 'Autumn news' }).waitFor();
  }

  before(async () => {
    sink = await SmtpSink.start();
    h = await startConsole({ smtpUrl: sink.url });
    t = h.t;
    const saved = await t.a.post('/sender/save', senderForm({ from_name: 'Acme News' }));
    assert.equal(saved.status, 200, saved.text);
    await t.database.db.updateTable('senders').set({ is_verified: 1 }).where('id', '=', saved.body.id).execute();
    senderEmail = (await t.a.get('/senders')).body.message.senders[0].from_email;
    const typeId = await make.contactType(t.a, 'Customers');
    await make.contact(t.a, { contact_type_id: typeId, email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' });
    await make.contact(t.a, { contact_type_id: typeId, email: 'grace.hopper@example.org', first_name: 'Grace', last_name: 'Hopper' });
    const group = await t.a.post('/unsubscribes-groups/save', { group_name: 'Newsletter', description: 'News', is_display: 1 });
    assert.equal(group.status, 200, group.text);
    const design = await t.a.post('/designs/create', { name: 'Autumn design', template_json: AUTUMN });
    assert.equal(design.status, 200, design.text);
    await drainQueue(t);
    sink.clear();
  });
  after(async () => {
    await h?.close();
    await sink?.close();
  });

  it('fills a test and the preview with the first recipient, or with a contact found by email', async () => {
    const { context, page, problems } = await h.open(WIDE);
    await h.signIn(page);
    await page.goto(`${h.base}/app/single-sends/new`);
    await page.getByRole('heading', { level: 1, name: 'New single send' }).waitFor();
    await page.locator('iframe.design-preview').waitFor();
    await page.getByLabel('Name').fill('Autumn news');
    await page.getByRole('group', { name: 'Recipients' }).getByLabel('All contacts of Customers').check();
    await page.getByLabel('Design').selectOption({ label: 'Autumn design' });
    await page.getByLabel('Subject').fill('Hello ((first_name)), our autumn news');
    await page.getByLabel('Preheader').fill('Leaves, soups and a sale');
    await press(page.getByRole('button', { name: 'Save draft' }));
    await page.getByRole('status').filter({ hasText: 'Draft saved.' }).waitFor();
    draftUtr = /\/app\/single-sends\/([0-9a-f-]{36})\/edit/.exec(page.url())![1];

    // By default the first recipient's data, said next to the preview and next to the test button.
    const ada = 'Ada Lovelace <ada@example.com>';
    await page.getByText(`Preview as ${ada}`).waitFor();
    const preview = page.frameLocator('iframe.mail-preview');
    await preview.getByText('Hi Ada, the leaves are turning.').waitFor();
    await page.getByText('Subject: Hello Ada, our autumn news').waitFor();
    await page.getByText(`Filled with the data of ${ada}.`).waitFor();
    await page.getByLabel('Test addresses').fill('tester@example.com');
    await press(page.getByRole('button', { name: 'Send test' }));
    await page.getByRole('status').filter({ hasText: 'Test sent to tester@example.com.' }).waitFor();
    await drainQueue(t);
    const first = await sink.waitFor((m) => m.envelope.to.includes('tester@example.com'));
    assert.equal(first.subject, '[Test] Hello Ada, our autumn news');
    assert.match(first.text ?? '', /Hi Ada, the leaves are turning\./);
    assert.deepEqual(await h.axeViolations(page), []);
    await h.shot(page, 'single-send-preview-as');

    // Another contact, found by the start of the email: the preview and the next test follow.
    await press(page.getByRole('button', { name: 'Choose another contact' }));
    await page.getByLabel('Find a contact by email').fill('grace');
    await press(page.getByRole('button', { name: 'Search', exact: true }));
    await press(page.getByRole('button', { name: 'Grace Hopper <grace.hopper@example.org>' }));
    const grace = 'Grace Hopper <grace.hopper@example.org>';
    await page.getByText(`Preview as ${grace}`).waitFor();
    await preview.getByText('Hi Grace, the leaves are turning.').waitFor();
    await page.getByText(`Filled with the data of ${grace}.`).waitFor();
    sink.clear();
    await press(page.getByRole('button', { name: 'Send test' }));
    await page.getByRole('status').filter({ hasText: 'Test sent to tester@example.com.' }).waitFor();
    await drainQueue(t);
    const second = await sink.waitFor((m) => m.envelope.to.includes('tester@example.com'));
    assert.equal(second.subject, '[Test] Hello Grace, our autumn news');
    assert.deepEqual(await h.axeViolations(page), []);
    await h.shot(page, 'single-send-preview-as-chosen');
    assert.deepEqual(problems, []);
    await context.close();
  });

  for (const [label, options] of [
    ['1280', WIDE],
    ['390', PHONE],
  ] as const) {
    it(`reviews the send before it goes: a recap, the design's links and a warning for the dead one (${label} px)`, async () => {
      const { context, page, problems } = await h.open(options);
      await h.signIn(page);
      await openDraft(page);
      await page.frameLocator('iframe.mail-preview').getByText('Hi Ada, the leaves are turning.').waitFor();
      await press(page.getByRole('button', { name: 'Review and send' }));
      const review = page.getByRole('group', { name: 'Review' });
      await review.waitFor();
      const recap = (term: string) =>
        review
          .locator('dl.recap div')
          .filter({ has: page.getByText(term, { exact: true }) })
          .locator('dd');
      assert.equal(await recap('Sender').textContent(), `Acme News <${senderEmail}>`);
      assert.equal(await recap('Subject').textContent(), 'Hello ((first_name)), our autumn news');
      assert.equal(await recap('Preheader').textContent(), 'Leaves, soups and a sale');
      assert.equal(await recap('Audience').textContent(), 'All contacts of Customers');
      assert.equal(await recap('Recipients').textContent(), '2');
      assert.equal(await recap('When').textContent(), 'Now');
      await review.frameLocator('iframe.thumbnail').getByText('Read the story').waitFor();

      // The links, the dead one marked, and the warning above the buttons: sending stays possible.
      const links = review.getByRole('list', { name: 'Links in the design' });
      assert.match(await links.getByRole('listitem').filter({ hasText: 'Read the story' }).innerText(), /#\s*Goes nowhere/);
      assert.match(
        await links.getByRole('listitem').filter({ hasText: 'Shop the autumn' }).innerText(),
        /https:\/\/shop\.example\.com\/autumn/,
      );
      assert.equal(await links.getByRole('listitem').filter({ hasText: 'Write to us' }).getByText('Goes nowhere').count(), 0);
      // The sender's domain is not a sending domain of the account: the second warning.
      const warnings = review.getByRole('region', { name: '2 warnings before sending' });
      await warnings.getByText('“Read the story” links to “#”, which goes nowhere in a mail.').waitFor();
      await warnings.getByText(/The sender's domain \(\S+\) is not a sending domain/).waitFor();
      await review.getByText('This will be sent to 2 recipients now.').waitFor();
      assert.equal(await review.getByRole('button', { name: 'Send now' }).isEnabled(), true);
      await fits(page, [review.getByRole('button', { name: 'Send now' }), review.getByRole('button', { name: 'Cancel' })]);
      assert.deepEqual(await h.axeViolations(page), []);
      // Chromium paints a sandboxed frame only while it is on screen: the thumbnail in view for the screenshot.
      await review.locator('iframe.thumbnail').scrollIntoViewIfNeeded();
      await h.shot(page, `single-send-review-${label}`);
      assert.deepEqual(problems, []);
      await context.close();
    });
  }

  it('offers no Edit for a send that is queued to go, but does for a scheduled one', async () => {
    const { context, page, problems } = await h.open(WIDE);
    await h.signIn(page);
    await openDraft(page);
    await press(page.getByRole('button', { name: 'Review and send' }));
    await press(page.getByRole('group', { name: 'Review' }).getByRole('button', { name: 'Send now' }));
    await page.waitForURL(`**/app/single-sends/${draftUtr}`);
    await page.getByText('Status: Ready').waitFor();
    assert.equal((await t.a.get('/single-send/details', { utr: draftUtr })).body.message.singleSend[0].status, 1);
    assert.equal(await page.getByRole('link', { name: 'Edit' }).count(), 0);
    // Its edit address says why it cannot change.
    await page.goto(`${h.base}/app/single-sends/${draftUtr}/edit`);
    await page.getByText('This send is queued to go now and can no longer change.').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Save draft' }).count(), 0);
    await h.shot(page, 'single-send-queued');

    const details = (await t.a.get('/single-send/details', { utr: draftUtr })).body.message.singleSend[0];
    const scheduled = await t.a.post('/single/send/create', {
      template_id: 2,
      sender_id: details.sender_id,
      unsubscribe_group_id: details.unsubscribe_group_id,
      single_send_name: 'Winter news',
      subject: 'Winter',
      preheader: 'Soon',
      recipient_id: [`contacts_${details.recipient_id[0].id}`],
      schedule_type: 1,
      schedule_date: '2040-01-01',
      schedule_time: '10:00',
    });
    assert.equal(scheduled.status, 200, scheduled.text);
    await page.goto(`${h.base}/app/single-sends/${scheduled.body.message.utr}`);
    await page.getByText('Status: Scheduled').waitFor();
    await page.getByRole('link', { name: 'Edit' }).waitFor();
    assert.deepEqual(problems, []);
    await context.close();
  });
});
