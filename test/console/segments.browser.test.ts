/**
 * The console's Segments section in a real browser (see browser.ts for the harness): the builder
 * with its live count, save, the list's member count, edit, members added and removed by hand,
 * delete, another account's segments kept out, an XSS payload in a name shown as text.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page, Route } from 'playwright-core';
import { make, type TestContext } from '../helpers.js';
import { skipWithoutChromium, startConsole, type ConsoleHarness } from './browser.js';

/** The builder's live count once it reads exactly `text` (e.g. `5 contacts match`). */
async function liveCount(page: Page, text: string): Promise<void> {
  const exact = new RegExp(`^\\s*${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`);
  await page.locator('.live-count').filter({ hasText: exact }).waitFor();
}

describe('the Segments section in chromium', { skip: skipWithoutChromium }, () => {
  let h: ConsoleHarness;
  let t: TestContext;
  let type: number;
  let otherType: number;

  /** The account's segment with this name, as `/segment/list` shows it. */
  async function segmentNamed(name: string): Promise<Record<string, any> | undefined> {
    const r = await t.a.get('/segment/list');
    return (r.body.message.segments as Array<Record<string, any>>).find((s) => s.segment_name === name);
  }

  before(async () => {
    h = await startConsole();
    t = h.t;
    type = await make.contactType(t.a, 'Newsletter');
    otherType = await make.contactType(t.a, 'Staff');
    // 30 contacts: every third in Paris (10), ages 18 to 47.
    for (let i = 0; i < 30; i++) {
      await make.contact(t.a, { contact_type_id: type, first_name: `P${i}`, city: i % 3 === 0 ? 'Paris' : 'Lyon', age: 18 + i });
    }
    await make.contact(t.a, { contact_type_id: otherType, city: 'Paris', age: 40 });
  });
  after(async () => {
    await h?.close();
  });

  it('builds a segment with a live count, saves it, edits it, adds and removes a recipient, and deletes it', async () => {
    const { context, page, problems } = await h.open();
    await h.signIn(page);
    await page.getByRole('navigation').getByRole('link', { name: 'Segments' }).click();
    await page.getByRole('heading', { level: 1, name: 'Segments' }).waitFor();
    await page.getByRole('cell', { name: 'No segments yet.' }).waitFor();
    assert.deepEqual(await h.axeViolations(page), [], 'axe on the empty list');

    await page.getByRole('link', { name: 'New segment' }).click();
    await page.getByRole('heading', { level: 1, name: 'New segment' }).waitFor();
    await page.getByLabel('Contact type').selectOption({ label: 'Staff' });
    await liveCount(page, '1 contact matches');
    await page.getByLabel('Contact type').selectOption({ label: 'Newsletter' });
    await liveCount(page, '30 contacts match');

    await page.getByRole('button', { name: 'Add condition' }).click();
    const first = page.getByRole('group', { name: 'Condition 1' });
    await first.getByLabel('Field').selectOption('city');
    assert.equal(await first.getByLabel('Operator').inputValue(), 'is');
    await first.getByLabel('Value').fill('Paris');
    await liveCount(page, '10 contacts match');

    await page.getByRole('button', { name: 'Add condition' }).click();
    const second = page.getByRole('group', { name: 'Condition 2' });
    await second.getByLabel('Field').selectOption('age');
    await second.getByLabel('Operator').selectOption('greater than');
    await liveCount(page, 'Complete the conditions to see how many contacts match.');
    await second.getByLabel('Value').fill('30');
    // From two conditions on, how they combine is chosen, not assumed.
    await liveCount(page, 'Choose whether a contact must match all the conditions or any of them.');
    await page.getByLabel('Match').selectOption({ label: 'all conditions' });
    await liveCount(page, '5 contacts match');
    // The API agrees: Paris and over 30 are i = 15, 18, 21, 24, 27.
    const counted = await t.a.post('/segment/count', {
      contact_type_id: type,
      select_field: ['city', 'age'],
      select_operator: ['is', 'greater than'],
      value: ['Paris', '30'],
    });
    assert.deepEqual(counted.body.message, { count: 5 });

    // A third row, removed again by its own button; the empty operators take no value.
    await page.getByRole('button', { name: 'Add condition' }).click();
    const third = page.getByRole('group', { name: 'Condition 3' });
    await third.getByLabel('Operator').selectOption('is empty');
    assert.equal(await third.getByLabel('Value').count(), 0);
    await third.getByLabel('Field').selectOption('created_at');
    await third.getByLabel('Operator').selectOption('before');
    assert.equal(await third.getByLabel('Value').getAttribute('type'), 'date');
    await third.getByLabel('Value').fill('2000-01-01');
    await liveCount(page, '0 contacts match');
    await page.getByRole('button', { name: 'Remove condition 3' }).click();
    assert.equal(await page.getByRole('group', { name: 'Condition 3' }).count(), 0);
    await liveCount(page, '5 contacts match');

    // Saving without a name: the field error, on the field.
    await page.getByRole('button', { name: 'Save segment' }).click();
    assert.equal(await page.getByRole('alert').textContent(), 'The segment name field is required.');
    assert.equal(await page.getByLabel('Segment name').getAttribute('aria-invalid'), 'true');
    assert.deepEqual(await h.axeViolations(page), [], 'axe on the builder');
    await h.shot(page, 'segment-new');

    await page.getByLabel('Segment name').fill('Parisians over 30');
    await page.getByRole('button', { name: 'Save segment' }).click();
    await page.getByRole('heading', { level: 1, name: 'Parisians over 30' }).waitFor();
    const saved = await segmentNamed('Parisians over 30');
    assert.ok(saved);
    assert.deepEqual(
      [saved.contact_type_id, saved.select_field, saved.select_operator, saved.value, saved.query_type, saved.segment_emails_count],
      [type, ['city', 'age'], ['is', 'greater than'], ['Paris', '30'], 'and', 5],
    );
    assert.ok(page.url().endsWith(`/app/segments/${saved.id}`));
    const members = page.getByRole('table', { name: /Members of Parisians over 30/ });
    await members.getByRole('cell', { name: 'P27 Lovelace' }).waitFor();
    assert.equal(await members.locator('tbody tr').count(), 5);
    assert.deepEqual(await h.axeViolations(page), [], 'axe on the segment page');
    await h.shot(page, 'segment');

    // The list shows the API's member count.
    await page.getByRole('link', { name: '← Segments' }).click();
    await page.getByRole('heading', { level: 1, name: 'Segments' }).waitFor();
    const row = page.getByRole('row', { name: /Parisians over 30/ });
    await row.waitFor();
    assert.match(await row.innerText(), new RegExp(`Parisians over 30\\s+Newsletter\\s+${saved.segment_emails_count}\\s*$`));
    assert.deepEqual(await h.axeViolations(page), [], 'axe on the list');
    await h.shot(page, 'segments');

    // Edit: any condition, the age between 20 and 25 (Paris: 10, plus i = 2, 4, 5, 7).
    await row.getByRole('link', { name: 'Parisians over 30' }).click();
    await page.getByRole('heading', { level: 1, name: 'Parisians over 30' }).waitFor();
    await liveCount(page, '5 contacts match');
    await page.getByLabel('Match').selectOption({ label: 'any condition' });
    await liveCount(page, '22 contacts match');
    await second.getByLabel('Operator').selectOption('between');
    await second.getByLabel('Value', { exact: true }).fill('25');
    await second.getByLabel('Second value').fill('20');
    await liveCount(page, '14 contacts match');
    await page.getByLabel('Segment name').fill('Paris or early twenties');
    await page.getByRole('button', { name: 'Save segment' }).click();
    await page.getByRole('status').filter({ hasText: 'Segment saved.' }).waitFor();
    await page.getByRole('heading', { level: 1, name: 'Paris or early twenties' }).waitFor();
    const edited = await segmentNamed('Paris or early twenties');
    assert.deepEqual(
      [edited?.id, edited?.select_operator, edited?.value, edited?.query_type, edited?.segment_emails_count],
      [saved.id, ['is', 'between'], ['Paris', '25', '20'], 'or', 14],
    );
    await page.getByRole('heading', { level: 2, name: 'Members 14' }).waitFor();

    // A recipient by hand: added, listed, removed.
    await page.getByLabel('First name').fill('Hand');
    await page.getByLabel('Last name').fill('Added');
    await page.getByLabel('Email').fill('hand@example.com');
    await page.getByRole('button', { name: 'Add recipient' }).click();
    await page.getByRole('status').filter({ hasText: 'hand@example.com added.' }).waitFor();
    const handRow = page.getByRole('row', { name: /hand@example\.com/ });
    assert.match(await handRow.innerText(), /Hand Added\s+hand@example\.com\s+Added by hand/);
    assert.equal((await segmentNamed('Paris or early twenties'))?.segment_emails_count, 15);
    const listed = await t.a.get('/segment/email/list', { segment_id: saved.id });
    assert.ok(listed.body.message.contactEmails.some((r: any) => r.email === 'hand@example.com' && r.contact_id === null));
    // The same address again: the field error.
    await page.getByLabel('First name').fill('Hand');
    await page.getByLabel('Last name').fill('Again');
    await page.getByLabel('Email').fill('hand@example.com');
    await page.getByRole('button', { name: 'Add recipient' }).click();
    assert.equal(await page.getByRole('alert').textContent(), 'The email has already been taken.');
    assert.equal(await page.getByLabel('Email').getAttribute('aria-invalid'), 'true');

    await handRow.getByRole('button', { name: 'Remove hand@example.com' }).click();
    await page.getByRole('status').filter({ hasText: 'hand@example.com removed.' }).waitFor();
    await page.getByRole('heading', { level: 2, name: 'Members 14' }).waitFor();
    assert.equal(await page.getByRole('row', { name: /hand@example\.com/ }).count(), 0);
    assert.equal((await segmentNamed('Paris or early twenties'))?.segment_emails_count, 14);

    // Delete, after an inline confirmation.
    await page.getByRole('button', { name: 'Delete segment' }).click();
    await page.getByRole('button', { name: 'Keep it' }).click();
    await page.getByRole('button', { name: 'Delete segment' }).click();
    assert.deepEqual(await h.axeViolations(page), [], 'axe on the confirmation');
    await page.getByRole('button', { name: 'Delete this segment for good' }).click();
    await page.getByRole('heading', { level: 1, name: 'Segments' }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Segment “Paris or early twenties” deleted.' }).waitFor();
    await page.getByRole('cell', { name: 'No segments yet.' }).waitFor();
    assert.equal(await segmentNamed('Paris or early twenties'), undefined);
    // The two refusals above (no name, the same address twice) are the only failed requests: the
    // live count never asks while a condition waits for its value.
    assert.deepEqual(
      problems,
      Array(2).fill('console: Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)'),
    );
    await context.close();
  });

  it("shows a segment name with an XSS payload as text, keeps another account's segments out, and fits a phone", async () => {
    const payload = '<img src=x onerror="window.__xss=1;alert(1)"><script>window.__xss=2</script>';
    const mine = await t.a.post('/segment/create', {
      segment_name: payload,
      contact_type_id: type,
      select_field: ['city'],
      select_operator: ['is'],
      value: ['Paris'],
    });
    assert.equal(mine.status, 200, mine.text);
    const theirType = await make.contactType(t.b, 'Their type');
    await make.contact(t.b, { contact_type_id: theirType, city: 'Paris' });
    const theirs = await t.b.post('/segment/create', { segment_name: 'Their secret segment', contact_type_id: theirType });
    assert.equal(theirs.status, 200, theirs.text);

    const { context, page, problems } = await h.open({ viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true });
    await h.signIn(page);
    await page.goto(`${h.base}/app/segments`);
    const link = page.getByRole('link', { name: payload });
    await link.waitFor();
    assert.equal(await page.getByText('Their secret segment').count(), 0);
    assert.equal(await page.locator('main tbody tr').count(), 1);
    const fits = async (where: string) => {
      const w = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
      assert.ok(w.scroll <= w.client, `${where} wider than the screen: ${w.scroll} > ${w.client}`);
    };
    await fits('the list');
    await link.click();
    await page.getByRole('heading', { level: 1, name: payload }).waitFor();
    await liveCount(page, '10 contacts match');
    assert.equal(await page.getByLabel('Segment name').inputValue(), payload);
    assert.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined);
    assert.equal(await page.locator('main img, main script, main svg').count(), 0);
    await fits('the segment page');
    assert.deepEqual(await h.axeViolations(page), [], 'axe on a phone');
    await h.shot(page, 'segment-phone');

    // Another account's segment by its address: not found, nothing of it shown.
    await page.goto(`${h.base}/app/segments/${theirs.body.id}`);
    await page.getByRole('heading', { level: 1, name: 'Segment not found' }).waitFor();
    assert.equal(await page.getByText('Their secret segment').count(), 0);
    await page.goto(`${h.base}/app/segments/${theirs.body.id}/nope`);
    await page.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor();
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('shows the count of the newest conditions when an older answer comes back later', async () => {
    const { context, page, problems } = await h.open();
    await h.signIn(page);
    // The count for "Paris" is held back until the count for "Lyon" has been shown.
    let held!: (route: Route) => void;
    const heldRoute = new Promise<Route>((resolve) => (held = resolve));
    await page.route('**/segment/count', async (route) => {
      if ((route.request().postData() ?? '').includes('Paris')) held(route);
      else await route.continue();
    });
    await page.goto(`${h.base}/app/segments/new`);
    await page.getByLabel('Contact type').selectOption({ label: 'Newsletter' });
    await liveCount(page, '30 contacts match');
    await page.getByRole('button', { name: 'Add condition' }).click();
    const row = page.getByRole('group', { name: 'Condition 1' });
    await row.getByLabel('Field').selectOption('city');
    await row.getByLabel('Value').fill('Paris');
    const paris = await heldRoute;
    await row.getByLabel('Value').fill('Lyon');
    await liveCount(page, '20 contacts match');
    const late = page.waitForResponse((r) => r.request() === paris.request());
    await paris.continue();
    assert.deepEqual(await (await late).json(), { status: 'success', message: { count: 10 } });
    // Past the late answer's handling (the next frames), the count still belongs to "Lyon".
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    await liveCount(page, '20 contacts match');
    assert.equal((await page.locator('.live-count').innerText()).trim(), '20 contacts match');
    assert.deepEqual(problems, []);
    await context.close();
  });
});
