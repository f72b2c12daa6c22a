/**
 * An A/B test of two subjects through the console, on the test clock and with a real SMTP sink
 * (see browser.ts for the harness): the composer's A/B step (its field errors next to their
 * fields, the draft saved and opened again), the review's recap, the send; the test share goes
 * out and the report shows both variants waiting, with the time the wait ends; a person opens
 * variant 1 and a machine opens variant 0, which must not decide it; the wait ends on the test
 * clock, a late "pick now" is told the winner was already chosen (the 409's words), the winner is
 * marked and the others get its subject, each recipient one mail. A second test is decided with
 * the "pick the winner now" button. A viewer is offered no pick. At 1280 px and 390 px: nothing
 * cut off, axe-core clean, screenshots.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import type { TestClock } from '../../src/util/clock.js';
import { drainQueue, make, type TestContext } from '../helpers.js';
import { mjmlText } from '../support/designs.js';
import { SmtpSink, type SinkMessage } from '../support/smtp-sink.js';
import { senderForm } from '../modules/senders.helpers.js';
import { APPLE_PROXY, BROWSER } from '../modules/single-sends-ab.helpers.js';
import { PASSWORD, person } from '../modules/access/sessions.helpers.js';
import { skipWithoutChromium, startConsole, type ConsoleHarness } from './browser.js';
import { fits, press } from './single-sends.helpers.js';
import { tableProblems } from './second-pass.layout.js';

const WIDE = { viewport: { width: 1280, height: 900 } };
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };
const HOUR = 3600_000;
const START = '2031-03-02T09:00:00.000Z';
const READERS = Array.from({ length: 10 }, (_, i) => `reader${i}@example.com`);

/** A saved design with a link, as a newsletter has. */
const DESIGN = mjmlText('<p>Hello ((first_name)), spring is here.</p><p><a href="https://shop.example.com/spring">Shop the spring</a></p>');

describe('an A/B test of two subjects in chromium', { skip: skipWithoutChromium, timeout: 300_000 }, () => {
  let h: ConsoleHarness;
  let t: TestContext;
  let clock: TestClock;
  let sink: SmtpSink;
  let senderId: number;
  let groupId: number;
  let typeId: number;
  let designId: number;
  let utr = '';

  /** axe-core clean, no table cut or word broken (see second-pass.layout.ts), and a screenshot. */
  async function looked(page: Page, name: string) {
    assert.deepEqual(await h.axeViolations(page), [], `axe on ${name}`);
    assert.deepEqual(await tableProblems(page), [], `tables on ${name}`);
    await h.shot(page, name);
  }

  /** A variant's card in the report. */
  const card = (page: Page, index: number) =>
    page
      .getByRole('list', { name: 'Variants' })
      .getByRole('listitem')
      .filter({ has: page.getByRole('heading', { name: `Variant ${index}`, exact: true }) });
  /** A figure of a variant's card. */
  const figure = (page: Page, index: number, term: string) =>
    card(page, index)
      .locator('dl div')
      .filter({ has: page.getByText(term, { exact: true }) })
      .locator('dd');

  /** Fetches a received message's open pixel as `ua` would. */
  async function openMail(m: SinkMessage, ua: string) {
    const pixel = /http:\/\/localhost:3000(\/t\/open\/[^"]+\.gif)/.exec(m.html ?? '')![1];
    assert.equal((await fetch(h.base + pixel, { headers: { 'user-agent': ua } })).status, 200);
  }

  before(async () => {
    sink = await SmtpSink.start();
    h = await startConsole({ smtpUrl: sink.url }, { clock: START });
    t = h.t;
    clock = t.clock as TestClock;
    const saved = await t.a.post('/sender/save', senderForm({ from_name: 'Acme News' }));
    assert.equal(saved.status, 200, saved.text);
    senderId = saved.body.id;
    await t.database.db.updateTable('senders').set({ is_verified: 1 }).where('id', '=', senderId).execute();
    typeId = await make.contactType(t.a, 'Readers');
    for (const [i, email] of READERS.entries()) await make.contact(t.a, { contact_type_id: typeId, email, first_name: `Reader${i}` });
    const group = await t.a.post('/unsubscribes-groups/save', { group_name: 'Newsletter', description: 'News', is_display: 1 });
    assert.equal(group.status, 200, group.text);
    groupId = group.body.id;
    const design = await t.a.post('/designs/create', { name: 'Spring with a link', template_json: DESIGN });
    assert.equal(design.status, 200, design.text);
    designId = design.body.id;
    await drainQueue(t); // the sender's verification mail
    sink.clear();
  });
  after(async () => {
    await h?.close();
    await sink?.close();
  });

  it('composes the A/B step: field errors next to their fields, the draft saved and shown again, the recap in the review', async () => {
    const { context, page, problems } = await h.open(WIDE);
    await h.signIn(page);
    await page.goto(`${h.base}/app/single-sends/new`);
    await page.getByRole('heading', { level: 1, name: 'New single send' }).waitFor();
    await page.locator('iframe.design-preview').waitFor();
    await page.getByLabel('Name').fill('Spring test');
    await page.getByRole('group', { name: 'Recipients' }).getByLabel('All contacts of Readers').check();
    await page.getByLabel('Design', { exact: true }).selectOption({ label: 'Spring with a link' });
    await page.getByLabel('Subject', { exact: true }).fill('Spring is here');
    await page.getByLabel('Preheader').fill('New in the shop');

    // The step: off at first; on, it has one other variant to edit, the share, the metric and the wait.
    const step = page.getByRole('group', { name: 'A/B test' });
    assert.equal(await step.getByRole('group', { name: 'Variant 1' }).count(), 0);
    await press(step.getByLabel('Try variants on a share of the recipients first'));
    const v1 = step.getByRole('group', { name: 'Variant 1' });
    await v1.waitFor();
    await step.getByText("Variant 0 is this send's own: the subject “Spring is here” and the design Spring with a link").waitFor();
    assert.equal(await step.getByLabel('Test share (%)').inputValue(), '20');
    assert.equal(await step.getByRole('radio', { name: 'Opens' }).isChecked(), true);
    await step.getByText('machine opens (privacy proxies that fetch every image) are left out').waitFor();
    await press(step.getByRole('radio', { name: 'Clicks' }));
    await step.getByText("security scanners' clicks are left out").waitFor();
    await press(step.getByRole('radio', { name: 'Opens' }));
    // A third variant can be added and removed; at most five in all.
    await press(step.getByRole('button', { name: 'Add a variant' }));
    await step.getByRole('group', { name: 'Variant 2' }).waitFor();
    await press(step.getByRole('button', { name: 'Remove variant 2' }));
    assert.equal(await step.getByRole('group', { name: 'Variant 2' }).count(), 0);
    assert.equal(await step.getByRole('button', { name: /^Remove variant/ }).count(), 0);

    // Refused: each field's words next to it (worded with its label), the focus on the first.
    await step.getByLabel('Test share (%)').fill('60');
    await step.getByLabel('Wait before choosing').fill('1');
    await step.getByLabel('Unit of the wait').selectOption('hours');
    await press(page.getByRole('button', { name: 'Save draft' }));
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.equal(await alert.textContent(), 'The variant 1 subject field is required. The test share must not be greater than 50.');
    const v1Subject = v1.getByLabel('Subject');
    assert.equal(await v1Subject.getAttribute('aria-invalid'), 'true');
    assert.equal(
      await page.locator(`#${await v1Subject.getAttribute('aria-describedby')}`).textContent(),
      'The variant 1 subject field is required.',
    );
    const share = step.getByLabel('Test share (%)');
    assert.equal(await share.getAttribute('aria-invalid'), 'true');
    assert.match((await share.getAttribute('aria-describedby')) ?? '', /e-ab_test_percent/);
    await step.locator('#e-ab_test_percent').filter({ hasText: 'The test share must not be greater than 50.' }).waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'v1-subject');
    await looked(page, 'ab-composer-errors-1280');

    await v1Subject.fill('Our spring sale');
    await share.fill('20');
    await press(page.getByRole('button', { name: 'Save draft' }));
    await page.getByRole('status').filter({ hasText: 'Draft saved.' }).waitFor();
    utr = /\/app\/single-sends\/([0-9a-f-]{36})\/edit/.exec(page.url())![1];
    const d = (await t.a.get('/single-send/details', { utr })).body.message.singleSend[0];
    assert.deepEqual(
      [
        d.status,
        d.ab_test,
        d.ab_test_percent,
        d.ab_winner_metric,
        d.ab_wait_minutes,
        d.variants.map((v: { subject: string }) => v.subject),
      ],
      [0, 1, 20, 'opens', 60, ['Spring is here', 'Our spring sale']],
    );
    assert.deepEqual([d.variants[1].template_id, d.variants[1].template_json, d.variants[1].design_id], [null, null, null]);

    // Opened again, the step shows the test as saved.
    const again = page.getByRole('group', { name: 'A/B test' });
    await again.getByRole('group', { name: 'Variant 1' }).waitFor();
    assert.equal(await again.getByLabel('Try variants on a share of the recipients first').isChecked(), true);
    assert.equal(await again.getByRole('group', { name: 'Variant 1' }).getByLabel('Subject').inputValue(), 'Our spring sale');
    assert.equal(await again.getByLabel('Wait before choosing').inputValue(), '1');
    assert.equal(await again.getByLabel('Unit of the wait').inputValue(), 'hours');
    await page.locator('iframe.design-preview').first().waitFor();
    await looked(page, 'ab-composer-1280');

    // The review recaps the test.
    await press(page.getByRole('button', { name: 'Review and send' }));
    const review = page.getByRole('group', { name: 'Review' });
    await review.waitFor();
    const recap = (term: string) =>
      review
        .locator('dl.ab-recap > div')
        .filter({ has: page.getByText(term, { exact: true }) })
        .locator('dd');
    const variants = (await recap('Variants').locator('li').allTextContents()).map((text) => text.replace(/\s+/g, ' ').trim());
    assert.deepEqual(variants, [
      // The send keeps the saved design's copy it was given (the picker cannot tell which saved design it came from).
      'Variant 0: “Spring is here”, the design this send has',
      "Variant 1: “Our spring sale”, the send's design",
    ]);
    assert.equal(
      (await recap('Test share').textContent())?.replace(/\s+/g, ' ').trim(),
      '20 % of the recipients (about 2 of 10), split evenly over the 2 variants',
    );
    assert.match((await recap('Winner on').textContent()) ?? '', /^People's opens\. The share of delivered messages a person opened/);
    assert.equal(await recap('Wait').textContent(), '1 hour after the test share has gone out; then the winner goes to the rest');
    await review
      .getByText(
        'This will be sent to 10 recipients now: first the test share, then the winning variant to the others once the wait is over.',
      )
      .waitFor();
    await fits(page, [review.getByRole('button', { name: 'Send now' })]);
    await looked(page, 'ab-review-1280');
    // The refusal's 422 is logged by the browser as a failed request; nothing else may be.
    assert.deepEqual(
      problems.filter((p) => !/status of 422/.test(p)),
      [],
    );
    await context.close();
  });

  it('fits a phone: the A/B step and its review at 390 px', async () => {
    const { context, page, problems } = await h.open(PHONE);
    await h.signIn(page);
    await page.goto(`${h.base}/app/single-sends/${utr}/edit`);
    const step = page.getByRole('group', { name: 'A/B test' });
    await step.getByRole('group', { name: 'Variant 1' }).waitFor();
    await fits(page, [
      step.getByRole('group', { name: 'Variant 1' }).getByLabel('Subject'),
      step.getByRole('button', { name: 'Add a variant' }),
      step.getByLabel('Unit of the wait'),
      page.getByRole('button', { name: 'Save draft' }),
    ]);
    await looked(page, 'ab-composer-390');
    await press(page.getByRole('button', { name: 'Review and send' }));
    const review = page.getByRole('group', { name: 'Review' });
    await review.locator('dl.ab-recap').waitFor();
    await fits(page, [review.getByRole('button', { name: 'Send now' }), review.getByRole('button', { name: 'Cancel' })]);
    await looked(page, 'ab-review-390');
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('sends the test share, waits, counts people’s opens only, and sends the winner to the rest when the wait ends', async () => {
    const { context, page, problems } = await h.open(WIDE);
    await h.signIn(page);
    await page.goto(`${h.base}/app/single-sends/${utr}/edit`);
    await press(page.getByRole('button', { name: 'Review and send' }));
    await press(page.getByRole('group', { name: 'Review' }).getByRole('button', { name: 'Send now' }));
    await page.waitForURL(`**/app/single-sends/${utr}`);
    await page.getByRole('heading', { level: 2, name: 'A/B test' }).waitFor();
    await page.getByText('The test starts when the send does.').waitFor();

    // The test share goes out: one message of each variant; the report (live) says it waits, and until when.
    await drainQueue(t);
    const shareMails = await sink.waitForCount(2);
    await page.getByText('Waiting for the winner.').waitFor({ timeout: 10_000 });
    await page.getByText('The wait ends at 2031-03-02 10:00 UTC').waitFor();
    await page.getByText('Status: Waiting for the winner').waitFor();
    for (const index of [0, 1]) {
      assert.equal(await figure(page, index, 'Triggered').textContent(), '1');
      await figure(page, index, 'Delivered').filter({ hasText: '1' }).waitFor();
    }
    assert.equal(await figure(page, 0, 'Subject').textContent(), 'Spring is here');
    assert.equal(await figure(page, 1, 'Subject').textContent(), 'Our spring sale');
    assert.equal(await figure(page, 1, 'Design').textContent(), "The send's design (as variant 0)");

    // A person opens variant 1; Apple's proxy fetches variant 0's images three times (machine opens).
    const v0 = shareMails.find((m) => m.subject === 'Spring is here')!;
    const v1 = shareMails.find((m) => m.subject === 'Our spring sale')!;
    assert.ok(v0 && v1, shareMails.map((m) => m.subject).join(', '));
    for (let i = 0; i < 3; i++) await openMail(v0, APPLE_PROXY);
    await openMail(v1, BROWSER);
    await figure(page, 1, 'Open rate').filter({ hasText: '100.0 %' }).waitFor({ timeout: 10_000 });
    assert.equal(await figure(page, 1, 'Opens by people').textContent(), '1');
    assert.equal(await figure(page, 0, 'Opens by people').textContent(), '0');
    assert.equal(await figure(page, 0, 'Open rate').textContent(), '0.0 %');
    await page.locator('dl.figures div').filter({ hasText: 'Machine opens' }).locator('dd').filter({ hasText: '3' }).waitFor();
    await fits(page, [card(page, 1).getByRole('button', { name: 'Pick variant 1 as the winner now' })]);
    await looked(page, 'ab-report-waiting-1280');

    // On a phone: the cards one under the other, each button inside the screen.
    const phone = await h.open(PHONE);
    await h.signIn(phone.page);
    await phone.page.goto(`${h.base}/app/single-sends/${utr}`);
    await phone.page.getByText('Waiting for the winner.').waitFor();
    await fits(phone.page, [
      card(phone.page, 0).getByRole('button', { name: 'Pick variant 0 as the winner now' }),
      card(phone.page, 1).getByRole('button', { name: 'Pick variant 1 as the winner now' }),
    ]);
    await looked(phone.page, 'ab-report-waiting-390');
    assert.deepEqual(phone.problems, []);
    await phone.context.close();

    // A viewer sees the test but is offered no pick.
    const viewer = await person(t, 'viewer');
    const seen = await h.open(WIDE);
    await seen.page.goto(`${h.base}/app`);
    await h.fillSignIn(seen.page, viewer.email, PASSWORD);
    await seen.page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await seen.page.goto(`${h.base}/app/single-sends/${utr}`);
    await seen.page.getByText('Waiting for the winner.').waitFor();
    assert.equal(await seen.page.getByRole('button', { name: /^Pick variant/ }).count(), 0);
    assert.deepEqual(seen.problems, []);
    await seen.context.close();

    // A person starts to pick variant 0 by hand (the page's own timers held, so it shows what it showed)…
    await page.clock.install();
    await page.reload();
    await page.getByText('Waiting for the winner.').waitFor();
    await page.clock.pauseAt(Date.now() + 1000);
    await press(card(page, 0).getByRole('button', { name: 'Pick variant 0 as the winner now' }));
    const confirm = card(page, 0).getByRole('group', { name: 'Confirm variant 0 as the winner' });
    await confirm.getByText('Send variant 0 (“Spring is here”) to every recipient outside the test now? The test ends.').waitFor();
    // …while the wait ends on the test clock: the person's open, not the machine's, makes variant 1 the winner.
    clock.advance(HOUR);
    await drainQueue(t);
    await press(confirm.getByRole('button', { name: 'Yes, variant 0 wins' }));
    await page.getByRole('alert').filter({ hasText: 'The winner of the A/B test was already chosen: variant 1.' }).waitFor();
    await page.getByText('Winner: variant 1 (“Our spring sale”). It went to the recipients outside the test.').waitFor();
    await card(page, 1).getByText('★ The winner').waitFor();
    assert.equal(await card(page, 0).getByText('★ The winner').count(), 0);
    assert.equal(await page.getByRole('button', { name: /^Pick variant/ }).count(), 0);
    await page.getByText('Status: Sent').waitFor();
    // The page's timers run again (axe-core waits on them).
    await page.clock.resume();
    await looked(page, 'ab-report-winner-1280');
    await page.setViewportSize({ width: 390, height: 844 });
    await fits(page, []);
    await looked(page, 'ab-report-winner-390');

    // Each reader got one mail: their variant in the test share, the winner's subject otherwise.
    const details = (await t.a.get('/single-send/details', { utr })).body.message.singleSend[0];
    assert.deepEqual([details.status, details.ab_winner, details.triggered], [3, 1, 10]);
    for (const email of READERS) {
      const got = sink.to(email).map((m) => m.subject);
      assert.equal(got.length, 1, `${email} got ${got.join(', ')}`);
      const inTest = v0.envelope.to.includes(email) ? 'Spring is here' : 'Our spring sale';
      assert.equal(got[0], inTest, email);
    }
    assert.equal(sink.messages.filter((m) => m.subject === 'Our spring sale').length, 9);
    // Filled for each reader: the winner's mail is the winner's design with their name.
    const rest = sink.messages.find((m) => m.subject === 'Our spring sale' && m !== v1)!;
    assert.match(rest.text ?? '', /Hello Reader\d, spring is here\./);
    // The late pick's 409 is logged by the browser as a failed request; nothing else may be.
    assert.deepEqual(
      problems.filter((p) => !/status of 409/.test(p)),
      [],
    );
    await context.close();
  });

  it('picks the winner by hand with the button: the others get that variant at once', async () => {
    sink.clear();
    const created = await t.a.post('/single/send/create', {
      template_id: 2,
      sender_id: senderId,
      unsubscribe_group_id: groupId,
      single_send_name: 'Summer test',
      subject: 'Summer A',
      preheader: 'Soon',
      recipient_id: [`contacts_${typeId}`],
      schedule_type: 0,
      ab_test: 1,
      ab_test_percent: 20,
      ab_winner_metric: 'clicks',
      ab_wait_minutes: 90,
      variants: [{ subject: 'Summer B' }],
    });
    assert.equal(created.status, 200, created.text);
    const summer = created.body.message.utr;
    await drainQueue(t);
    await sink.waitForCount(2);

    const { context, page, problems } = await h.open(WIDE);
    await h.signIn(page);
    await page.goto(`${h.base}/app/single-sends/${summer}`);
    await page
      .getByText(`The wait ends at ${new Date(clock.now().getTime() + 90 * 60_000).toISOString().slice(0, 16).replace('T', ' ')} UTC`)
      .waitFor();
    const about = await page.locator('section[aria-labelledby="h-ab"] > p').first().textContent();
    assert.match(
      about!.replace(/\s+/g, ' '),
      /the winner is the best rate of people's clicks, 1 hour 30 minutes after the test share went out/,
    );
    await press(card(page, 1).getByRole('button', { name: 'Pick variant 1 as the winner now' }));
    // Cancel first: nothing happens.
    await press(card(page, 1).getByRole('button', { name: 'Cancel' }));
    assert.equal((await t.a.get('/single-send/details', { utr: summer })).body.message.singleSend[0].ab_winner, null);
    await press(card(page, 1).getByRole('button', { name: 'Pick variant 1 as the winner now' }));
    await press(card(page, 1).getByRole('button', { name: 'Yes, variant 1 wins' }));
    await page.getByRole('status').filter({ hasText: 'Variant 1 is the winner: 8 messages queued for the other recipients.' }).waitFor();
    await page.getByText('Winner: variant 1 (“Summer B”).').waitFor();
    await card(page, 1).getByText('★ The winner').waitFor();
    await drainQueue(t);
    await page.getByText('Status: Sent').waitFor({ timeout: 10_000 });
    await sink.waitForCount(10);
    assert.equal(sink.messages.filter((m) => m.subject === 'Summer B').length, 9);
    for (const email of READERS) assert.equal(sink.to(email).length, 1, email);
    await looked(page, 'ab-report-picked-1280');
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('gives a variant a design of its own with the design picker: saved, shown again, its links in the review', async () => {
    const { context, page, problems } = await h.open(WIDE);
    await h.signIn(page);
    await page.goto(`${h.base}/app/single-sends/new`);
    await page.locator('iframe.design-preview').waitFor();
    await page.getByLabel('Name').fill('Design test');
    await page.getByRole('group', { name: 'Recipients' }).getByLabel('All contacts of Readers').check();
    await page.getByLabel('Design', { exact: true }).selectOption({ label: 'Newsletter' });
    await page.getByLabel('Subject', { exact: true }).fill('The newsletter');
    await page.getByLabel('Preheader').fill('News');
    const step = page.getByRole('group', { name: 'A/B test' });
    await press(step.getByLabel('Try variants on a share of the recipients first'));
    const v1 = step.getByRole('group', { name: 'Variant 1' });
    await v1.getByLabel('Subject').fill('The spring design');
    await press(v1.getByLabel("A design of its own (else this send's design)"));
    await v1.getByLabel('Design', { exact: true }).selectOption({ label: 'Spring with a link' });
    await v1.getByTitle('Preview of Spring with a link').waitFor();
    await press(page.getByRole('button', { name: 'Save draft' }));
    await page.getByRole('status').filter({ hasText: 'Draft saved.' }).waitFor();
    const saved = /\/app\/single-sends\/([0-9a-f-]{36})\/edit/.exec(page.url())![1];
    const d = (await t.a.get('/single-send/details', { utr: saved })).body.message.singleSend[0];
    assert.deepEqual([d.template_id, d.variants[1].design_id, d.variants[1].template_id], [2, designId, 1]);
    assert.equal(d.variants[1].template_json, DESIGN);

    // Opened again: the variant's picker shows its saved design.
    const again = page.getByRole('group', { name: 'A/B test' }).getByRole('group', { name: 'Variant 1' });
    await again.getByTitle('Preview of Spring with a link').waitFor();
    assert.equal(await again.getByLabel("A design of its own (else this send's design)").isChecked(), true);
    assert.equal(await again.getByLabel('Design', { exact: true }).locator('option:checked').textContent(), 'Spring with a link');

    // The review names each variant's design and marks the links of variant 1's own.
    await press(page.getByRole('button', { name: 'Review and send' }));
    const review = page.getByRole('group', { name: 'Review' });
    await review.locator('dl.ab-recap').waitFor();
    const variants = (await review.locator('dl.ab-recap ol li').allTextContents()).map((text) => text.replace(/\s+/g, ' ').trim());
    assert.deepEqual(variants, [
      'Variant 0: “The newsletter”, the design Newsletter',
      'Variant 1: “The spring design”, the design Spring with a link',
    ]);
    const shop = review.getByRole('list', { name: 'Links in the design' }).getByRole('listitem').filter({ hasText: 'Shop the spring' });
    assert.match(await shop.innerText(), /^Variant 1\s+Shop the spring\s+https:\/\/shop\.example\.com\/spring/);
    await looked(page, 'ab-review-design-1280');
    // Its report names each variant's design.
    await press(review.getByRole('button', { name: 'Send now' }));
    await page.waitForURL(`**/app/single-sends/${saved}`);
    await figure(page, 1, 'Design').filter({ hasText: 'Its own: Spring with a link' }).waitFor();
    assert.equal(await figure(page, 0, 'Design').textContent(), "The send's design");
    assert.deepEqual(problems, []);
    await context.close();
  });
});
