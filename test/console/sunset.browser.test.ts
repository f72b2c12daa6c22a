/**
 * The sunset policy's Settings page in a real browser (see browser.ts for the harness): the
 * preview follows the form and is shown before the policy goes on, a value out of range is
 * refused on its field, turning it on lists the inactive addresses in Suppressions, and it turns off.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { make, type TestContext } from '../helpers.js';
import type { SendsContext } from '../modules/single-sends.helpers.js';
import { DAY, seedMessage } from '../modules/segments/engagement.helpers.js';
import { skipWithoutChromium, startConsole, type ConsoleHarness } from './browser.js';

/** The failed loads a test causes on purpose (a 422 shown as text) are logged by chromium as errors. */
const unexpected = (problems: string[], ...statuses: number[]) =>
  problems.filter((p) => !statuses.some((s) => p.includes(`status of ${s}`)));

describe('the sunset policy page in chromium', { skip: skipWithoutChromium }, () => {
  let h: ConsoleHarness;
  let t: TestContext;

  before(async () => {
    h = await startConsole();
    t = h.t;
    const a = t.a.keys!.user_id;
    const s = t as unknown as SendsContext;
    const type = await make.contactType(t.a, 'Readers');
    // quiet1@ and quiet2@: 6 messages from 300 days ago, never opened; fresh@ opened one last week.
    for (const email of ['quiet1@example.com', 'quiet2@example.com', 'fresh@example.com']) {
      await make.contact(t.a, { contact_type_id: type, email });
      for (let i = 0; i < 6; i++) await seedMessage(s, { userId: a, email, kind: 'automation', sentAgo: (300 - 30 * i) * DAY });
    }
    await seedMessage(s, { userId: a, email: 'fresh@example.com', sentAgo: 8 * DAY, openedAgo: 7 * DAY });
  });
  after(async () => {
    await h?.close();
  });

  it('previews before switching on, refuses a value out of range, lists the inactive addresses, and switches off', async () => {
    const { context, page, problems } = await h.open();
    await h.signIn(page);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('main').getByRole('link', { name: 'Sunset policy', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Sunset policy' }).waitFor();
    await page.getByText('The policy is off.').waitFor();
    const preview = page.getByRole('region', { name: 'Preview' });
    await preview.getByText('2 addresses would be suppressed now.').waitFor();
    assert.deepEqual(await preview.getByRole('listitem').allInnerTexts(), ['quiet1@example.com', 'quiet2@example.com']);

    const days = page.getByLabel("Days without a person's open or click");
    assert.equal(await days.inputValue(), '180');
    await days.fill('400');
    await preview.getByText('0 addresses would be suppressed now.').waitFor();
    await days.fill('10');
    await preview.getByText('The sunset days must be at least 30.').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Turn the policy on…' }).isDisabled(), true);
    await days.fill('180');
    await preview.getByText('2 addresses would be suppressed now.').waitFor();
    assert.deepEqual(await h.axeViolations(page), [], 'axe on the page, off');
    await h.shot(page, 'settings-sunset');

    // Switching on asks first, with the preview's count.
    await page.getByRole('button', { name: 'Turn the policy on…' }).click();
    await page.getByText('Stop mailing 2 addresses now?').waitFor();
    await page.getByRole('button', { name: 'Yes, turn it on' }).click();
    await page.getByRole('status').filter({ hasText: 'Sunset policy on: inactive addresses are suppressed.' }).waitFor();
    await page.getByText('The policy is on.').waitFor();
    await preview.getByText('2 addresses inactive now.').waitFor();
    assert.deepEqual((await t.a.get('/account/settings')).body.message.settings, {
      sunset_enabled: 1,
      sunset_days: 180,
      sunset_min_messages: 5,
      require_two_factor: 0,
    });
    const listed = (await t.a.get('/suppressions')).body.message.suppressions as Array<{ email: string; reason: string }>;
    assert.deepEqual(listed.map((x) => `${x.email} ${x.reason}`).sort(), ['quiet1@example.com inactive', 'quiet2@example.com inactive']);
    assert.deepEqual(await h.axeViolations(page), [], 'axe on the page, on');

    // Suppressions shows them as inactive.
    await page.getByRole('link', { name: 'Suppressions' }).first().click();
    await page.getByRole('heading', { level: 1, name: 'Suppressions' }).waitFor();
    await page.getByRole('row', { name: /quiet1@example\.com\s+Inactive \(sunset policy\)/ }).waitFor();
    await page.goBack();
    await page.getByRole('heading', { level: 1, name: 'Sunset policy' }).waitFor();

    await page.getByRole('button', { name: 'Turn the policy off' }).click();
    await page.getByText('The policy is off.').waitFor();
    assert.equal((await t.a.get('/account/settings')).body.message.settings.sunset_enabled, 0);
    assert.deepEqual((await t.a.get('/suppressions')).body.message.suppressions, []);
    assert.deepEqual(unexpected(problems, 422), []);
    await context.close();
  });
});
