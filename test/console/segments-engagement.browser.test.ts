/**
 * The segment builder's engagement conditions in a real browser (see browser.ts for the harness):
 * a number of days for "any message", a picker of the account's single sends, the live count as
 * they change, and the saved definition as the API stores it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { make, type TestContext } from '../helpers.js';
import { createSend, group, sendForm, sendRow, verifiedSender, type SendsContext } from '../modules/single-sends.helpers.js';
import { DAY, seedMessage } from '../modules/segments/engagement.helpers.js';
import { skipWithoutChromium, startConsole, type ConsoleHarness } from './browser.js';

/** The builder's live count once it reads exactly `text`. */
async function liveCount(page: Page, text: string): Promise<void> {
  const exact = new RegExp(`^\\s*${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`);
  await page.locator('.live-count').filter({ hasText: exact }).waitFor();
}

describe('engagement conditions in the segment builder, in chromium', { skip: skipWithoutChromium }, () => {
  let h: ConsoleHarness;
  let t: TestContext;
  let type: number;
  let utr: string;

  before(async () => {
    h = await startConsole();
    t = h.t;
    const a = t.a.keys!.user_id;
    type = await make.contactType(t.a, 'Readers');
    for (const n of ['ann', 'bob', 'cid', 'dee', 'eve']) await make.contact(t.a, { contact_type_id: type, email: `${n}@example.com` });
    // The sends' helpers read the clock from the context: the harness runs on the system clock.
    const s = t as unknown as SendsContext;
    const base = { sender: await verifiedSender(s, t.a), group: await group(t.a), type };
    utr = await createSend(
      t.a,
      sendForm(base, { single_send_name: 'Spring news', schedule_type: 1, schedule_date: '2099-01-01', schedule_time: '10:00' }),
    );
    await createSend(
      t.a,
      sendForm(base, { single_send_name: 'Summer news', schedule_type: 1, schedule_date: '2099-01-01', schedule_time: '10:00' }),
    );
    const sendId = (await sendRow(s, utr)).id;
    // ann opened Spring news 3 days ago; bob clicked it 10 days ago; cid only received it.
    await seedMessage(s, { userId: a, email: 'ann@example.com', sendId, sentAgo: 12 * DAY, openedAgo: 3 * DAY });
    await seedMessage(s, { userId: a, email: 'bob@example.com', sendId, sentAgo: 12 * DAY, clickedAgo: 10 * DAY });
    await seedMessage(s, { userId: a, email: 'cid@example.com', sendId, sentAgo: 12 * DAY });
  });
  after(async () => {
    await h?.close();
  });

  it('offers days for any message and a picker of sends, with the live count, and saves them', async () => {
    const { context, page, problems } = await h.open();
    await h.signIn(page);
    await page.getByRole('navigation').getByRole('link', { name: 'Segments' }).click();
    await page.getByRole('link', { name: 'New segment' }).click();
    await page.getByRole('heading', { level: 1, name: 'New segment' }).waitFor();
    await page.getByLabel('Contact type').selectOption({ label: 'Readers' });
    await liveCount(page, '5 contacts match');

    await page.getByRole('button', { name: 'Add condition' }).click();
    const first = page.getByRole('group', { name: 'Condition 1' });
    await first.getByLabel('Field').selectOption({ label: 'Any message (days)' });
    assert.equal(await first.getByLabel('Operator').inputValue(), 'opened in the last');
    const days = first.getByLabel('Days');
    assert.equal(await days.inputValue(), '30');
    assert.equal(await days.getAttribute('type'), 'number');
    await liveCount(page, '2 contacts match');
    await days.fill('5');
    await liveCount(page, '1 contact matches');
    await first.getByLabel('Operator').selectOption('not opened in the last');
    await liveCount(page, '4 contacts match');
    await days.fill('');
    await liveCount(page, 'Complete the conditions to see how many contacts match.');
    await days.fill('30');
    await first.getByLabel('Operator').selectOption('received in the last');
    await liveCount(page, '3 contacts match');

    await page.getByRole('button', { name: 'Add condition' }).click();
    const second = page.getByRole('group', { name: 'Condition 2' });
    await second.getByLabel('Field').selectOption({ label: 'A single send' });
    const picker = second.getByLabel('Single send');
    assert.deepEqual(await picker.locator('option').allInnerTexts(), ['Summer news', 'Spring news']);
    await picker.selectOption({ label: 'Spring news' });
    assert.equal(await second.getByLabel('Operator').inputValue(), 'opened');
    // From two conditions on, how they combine is chosen, not assumed.
    await page.getByLabel('Match').selectOption({ label: 'all conditions' });
    await liveCount(page, '2 contacts match');
    await second.getByLabel('Operator').selectOption('clicked');
    await liveCount(page, '1 contact matches');
    assert.deepEqual(await h.axeViolations(page), [], 'axe on the builder with engagement conditions');
    await h.shot(page, 'segment-engagement');

    await page.getByLabel('Segment name').fill('Clicked spring news');
    await page.getByRole('button', { name: 'Save segment' }).click();
    await page.getByRole('heading', { level: 1, name: 'Clicked spring news' }).waitFor();
    const saved = ((await t.a.get('/segment/list')).body.message.segments as Array<Record<string, any>>).find(
      (x) => x.segment_name === 'Clicked spring news',
    )!;
    assert.deepEqual(
      [saved.select_field, saved.select_operator, saved.value, saved.segment_emails_count],
      [['engagement', 'single_send'], ['received in the last', 'clicked'], ['30', utr], 1],
    );
    // Editing shows the saved send in the picker and the days in their box.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Clicked spring news' }).waitFor();
    await liveCount(page, '1 contact matches');
    assert.equal(await page.getByRole('group', { name: 'Condition 1' }).getByLabel('Days').inputValue(), '30');
    assert.equal(await page.getByRole('group', { name: 'Condition 2' }).getByLabel('Single send').inputValue(), utr);
    assert.deepEqual(problems, []);
    await context.close();
  });
});
