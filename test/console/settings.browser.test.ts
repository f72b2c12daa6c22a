/**
 * The console's Settings section in a real browser (see browser.ts for the harness): senders,
 * unsubscribe groups and their recipients, global unsubscribes, suppressions, notification
 * recipients, webhook endpoints and their deliveries log. Each page: its effects checked through
 * the API, another account's records not shown, axe and a screenshot.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import type { TestContext } from '../helpers.js';
import { startJobs } from '../../src/lanes.js';
import { allCities, allStates } from '../../src/reference/geo.js';
import { Receiver } from '../modules/webhooks.helpers.js';
import { skipWithoutChromium, startConsole, type ConsoleHarness } from './browser.js';

const INDIA = 101;
const STATE = allStates().find((s) => s.country_id === INDIA && allCities().some((c) => c.state_id === s.id))!;
const CITY = allCities().find((c) => c.state_id === STATE.id)!;
const XSS = '<img src=x onerror=alert(1)>Acme';

/** The failed loads a test causes on purpose (a 422 shown on its fields, a 429 shown as text) are logged by chromium as errors. */
const unexpected = (problems: string[], ...statuses: number[]) =>
  problems.filter((p) => !statuses.some((s) => p.includes(`status of ${s}`)));

const sender = (extra: Record<string, unknown> = {}) => ({
  from_name: 'Acme News',
  from_email: 'news@acme.example.com',
  reply_to_email: 'replies@acme.example.com',
  country_id: INDIA,
  company_address: '1 Main Street',
  nickname: 'acme',
  ...extra,
});

describe('the console’s Settings section in chromium', { skip: skipWithoutChromium }, () => {
  let h: ConsoleHarness;
  let t: TestContext;
  let base: string;

  before(async () => {
    // Webhook endpoints on 127.0.0.1 (the test's receiver) are let through.
    h = await startConsole({ webhooksAllowPrivate: true });
    t = h.t;
    base = h.base;
  });
  after(async () => {
    await h?.close();
  });

  /** Signs in and opens a Settings page by its link on /settings. */
  async function openSettings(name: string): Promise<{ page: Page; problems: string[]; close: () => Promise<void> }> {
    const { context, page, problems } = await h.open();
    await h.signIn(page);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    await page.getByRole('main').getByRole('link', { name, exact: true }).click();
    await page.getByRole('heading', { level: 1, name }).waitFor();
    return { page, problems, close: () => context.close() };
  }

  const status = (page: Page, text: string | RegExp) => page.getByRole('status').filter({ hasText: text }).waitFor();

  it('lists its pages, each with its heading and a link back', async () => {
    const { page, problems, close } = await openSettings('Senders');
    await page.getByRole('link', { name: '← Settings' }).click();
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    assert.deepEqual(await h.axeViolations(page), []);
    await h.shot(page, 'settings');
    const names = [
      'Senders',
      'Sending domains',
      'Unsubscribe groups',
      'Global unsubscribes',
      'Suppressions',
      'Notification recipients',
      'Webhooks',
    ];
    for (const name of names) {
      await page.getByRole('main').getByRole('link', { name, exact: true }).click();
      await page.getByRole('heading', { level: 1, name }).waitFor();
      await page.getByRole('link', { name: '← Settings' }).click();
      await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    }
    await page.goto(`${base}/app/settings/nothing-here`);
    await page.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor();
    assert.deepEqual(problems, []);
    await close();
  });

  it('adds a sender with field errors on its fields, resends its link, edits and deletes it; the nickname is text', async () => {
    assert.equal((await t.b.post('/sender/save', sender({ nickname: 'Other account sender', from_email: 'b@b.example.com' }))).status, 200);
    const made = await t.a.post(
      '/sender/save',
      sender({ nickname: 'api-made', from_email: 'api@acme.example.com', state_id: STATE.id, city_id: CITY.id }),
    );
    assert.equal(made.status, 200, made.text);

    const { page, problems, close } = await openSettings('Senders');
    await page.getByRole('row', { name: /api-made/ }).waitFor();
    assert.equal(await page.getByRole('row', { name: /Other account sender/ }).count(), 0);

    // Nothing filled in: each required field says so, on itself.
    await page.getByRole('button', { name: 'Add sender' }).click();
    await page.getByRole('alert').waitFor();
    const nickname = page.getByLabel('Nickname');
    assert.equal(await nickname.getAttribute('aria-invalid'), 'true');
    assert.match(await page.locator(`#${await nickname.getAttribute('aria-describedby')}`).innerText(), /The nickname field is required\./);
    assert.equal(await page.getByLabel('Country').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.getByLabel('Company address', { exact: true }).getAttribute('aria-invalid'), 'true');
    assert.equal(await page.getByLabel('Company address line 2').getAttribute('aria-invalid'), null);

    await nickname.fill(XSS);
    await page.getByLabel('From name').fill('Acme Newsletter');
    await page.getByLabel('From email').fill('hello@acme.example.com');
    await page.getByLabel('Reply-to email').fill('reply@acme.example.com');
    await page.getByLabel('Company address', { exact: true }).fill('2 High Street');
    await page.getByLabel('Company address line 2').fill('Suite 5');
    await page.getByLabel('Country').selectOption({ label: 'India' });
    await page.getByLabel('Zip code').fill('560001');
    await page.getByRole('button', { name: 'Add sender' }).click();
    await status(page, 'A verification link was mailed to hello@acme.example.com.');
    assert.equal(await nickname.getAttribute('aria-invalid'), null);

    const listed = (await t.a.get('/senders')).body.message.senders as Array<Record<string, any>>;
    const added = listed.find((s) => s.from_email === 'hello@acme.example.com')!;
    assert.deepEqual(
      [added.nickname, added.from_name, added.reply_to_email, added.company_address, added.company_address2, added.zip_code],
      [XSS, 'Acme Newsletter', 'reply@acme.example.com', '2 High Street', 'Suite 5', '560001'],
    );
    assert.equal(added.country_id, INDIA);
    assert.equal(added.is_verified, 0);

    // The nickname is shown as text: no image made, no script ran.
    const row = page.getByRole('row', { name: /hello@acme\.example\.com/ });
    assert.match(
      await row.innerText(),
      /<img src=x onerror=alert\(1\)>Acme\s+Acme Newsletter <hello@acme\.example\.com>\s+reply@acme\.example\.com\s+Not verified/,
    );
    assert.equal(await page.locator('main img').count(), 0);

    // The link went out on save: a resend this soon is refused with the API's reason.
    await row.getByRole('button', { name: /^Resend verification/ }).click();
    assert.match(
      await page.getByRole('alert').innerText(),
      /^A verification mail was sent less than a minute ago\. Try again in \d+ seconds\.$/,
    );
    await t.database.db.updateTable('senders').set({ send_at: '2020-01-01 00:00:00' }).where('id', '=', added.id).execute();
    await row.getByRole('button', { name: /^Resend verification/ }).click();
    await status(page, 'A new verification link was mailed to hello@acme.example.com.');
    assert.equal(await page.getByRole('alert').count(), 0);
    assert.deepEqual(await h.axeViolations(page), []);
    await h.shot(page, 'settings-senders');

    // Edit keeps what the console does not show (the state and city of a sender made through the API).
    await page
      .getByRole('row', { name: /api-made/ })
      .getByRole('button', { name: /^Edit/ })
      .click();
    await page.getByRole('heading', { level: 2, name: 'Edit sender “api-made”' }).waitFor();
    assert.equal(await page.getByLabel('From email').inputValue(), 'api@acme.example.com');
    await page.getByLabel('From name').fill('Acme Sales');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await status(page, 'Sender “api-made” saved.');
    const edited = (await t.a.get('/sender/details', { sender_id: made.body.id })).body.message.sender;
    assert.deepEqual([edited.from_name, edited.state_id, edited.city_id], ['Acme Sales', STATE.id, CITY.id]);

    // Delete asks first, inline; its success text arrives in `errors` and is still a success.
    await row.getByRole('button', { name: /^Delete/ }).click();
    await row.getByRole('button', { name: 'Cancel' }).click();
    await row.getByRole('button', { name: /^Delete/ }).click();
    await row.getByRole('button', { name: 'Yes, delete' }).click();
    await status(page, 'deleted.');
    await page.getByRole('row', { name: /hello@acme\.example\.com/ }).waitFor({ state: 'detached' });
    const left = (await t.a.get('/senders')).body.message.senders as Array<Record<string, any>>;
    assert.deepEqual(
      left.map((s) => s.nickname),
      ['api-made'],
    );
    assert.deepEqual(unexpected(problems, 422, 429), []);
    await close();
  });

  it('adds, edits and deletes an unsubscribe group, and adds and removes its recipients', async () => {
    assert.equal(
      (await t.b.post('/unsubscribes-groups/save', { group_name: 'Other account group', description: 'b', is_display: 1 })).status,
      200,
    );
    const { page, problems, close } = await openSettings('Unsubscribe groups');
    await page.getByLabel('Group name').fill('Newsletter');
    await page.getByLabel('Description').fill('Monthly news');
    assert.equal(await page.getByLabel('Show on the preferences page').isChecked(), true);
    await page.getByRole('button', { name: 'Add group' }).click();
    await status(page, 'Group “Newsletter” added.');
    const row = page.getByRole('row', { name: /Monthly/ });
    assert.match(await row.innerText(), /Newsletter\s+Monthly news\s+Shown\s+0/);
    assert.equal(await page.getByRole('row', { name: /Other account group/ }).count(), 0);
    let groups = (await t.a.get('/unsubscribes-groups')).body.message.unsubscribesGroups as Array<Record<string, any>>;
    assert.deepEqual(
      groups.map((g) => [g.group_name, g.description, g.is_display]),
      [['Newsletter', 'Monthly news', 1]],
    );

    await row.getByRole('button', { name: /^Edit/ }).click();
    await page.getByLabel('Group name').fill('Monthly newsletter');
    await page.getByLabel('Show on the preferences page').uncheck();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await status(page, 'Group “Monthly newsletter” saved.');
    groups = (await t.a.get('/unsubscribes-groups')).body.message.unsubscribesGroups;
    assert.deepEqual(
      groups.map((g) => [g.group_name, g.is_display]),
      [['Monthly newsletter', 0]],
    );
    assert.deepEqual(await h.axeViolations(page), []);
    await h.shot(page, 'settings-groups');

    await row.getByRole('link', { name: 'Monthly newsletter' }).click();
    await page.getByRole('heading', { level: 1, name: 'Group “Monthly newsletter”' }).waitFor();
    await page.getByRole('cell', { name: 'No one has left this group.' }).waitFor();
    await page.getByLabel('Addresses').fill('not an address');
    await page.getByRole('button', { name: 'Add to group' }).click();
    await page.getByRole('alert').waitFor();
    assert.equal(await page.getByLabel('Addresses').getAttribute('aria-invalid'), 'true');
    await page.getByLabel('Addresses').fill('x@example.com, y@example.com');
    await page.getByRole('button', { name: 'Add to group' }).click();
    await status(page, 'Added 2 addresses.');
    await page
      .getByRole('row', { name: /x@example\.com/ })
      .getByRole('button', { name: /^Remove/ })
      .click();
    await page
      .getByRole('row', { name: /x@example\.com/ })
      .getByRole('button', { name: 'Yes, remove' })
      .click();
    await status(page, 'x@example.com removed from the group.');
    const recipients = (await t.a.get('/unsubscribes-groups/recipients-list', { groupId: groups[0].id })).body.message.recipients;
    assert.deepEqual(
      recipients.map((r: any) => r.email_address),
      ['y@example.com'],
    );
    assert.deepEqual(await h.axeViolations(page), []);
    await h.shot(page, 'settings-group');

    await page.getByRole('link', { name: '← Unsubscribe groups' }).click();
    await page
      .getByRole('row', { name: /Monthly newsletter/ })
      .getByRole('cell', { name: '1', exact: true })
      .waitFor();
    await page
      .getByRole('row', { name: /Monthly newsletter/ })
      .getByRole('button', { name: /^Delete/ })
      .click();
    await page
      .getByRole('row', { name: /Monthly newsletter/ })
      .getByRole('button', { name: 'Yes, delete' })
      .click();
    await status(page, 'Group “Monthly newsletter” deleted.');
    await page.getByRole('cell', { name: 'No unsubscribe groups yet.' }).waitFor();
    assert.deepEqual((await t.a.get('/unsubscribes-groups')).body.message.unsubscribesGroups, []);
    assert.deepEqual(unexpected(problems, 422), []);
    await close();
  });

  it('adds global unsubscribes and removes one', async () => {
    assert.equal((await t.b.post('/global-unsubscribes/save', { email_address: 'other-account@example.com' })).status, 200);
    const { page, problems, close } = await openSettings('Global unsubscribes');
    await page.getByRole('cell', { name: 'No global unsubscribes.' }).waitFor();
    await page.getByLabel('Addresses').fill('g1@example.com,g2@example.com');
    await page.getByRole('button', { name: 'Add addresses' }).click();
    await status(page, 'Added 2 addresses.');
    await page
      .getByRole('row', { name: /g1@example\.com/ })
      .getByRole('button', { name: /^Remove/ })
      .click();
    await page
      .getByRole('row', { name: /g1@example\.com/ })
      .getByRole('button', { name: 'Yes, remove' })
      .click();
    await status(page, 'g1@example.com removed');
    await page.getByRole('row', { name: /g1@example\.com/ }).waitFor({ state: 'detached' });
    const listed = (await t.a.get('/global-unsubscribes')).body.message.unSubscribers;
    assert.deepEqual(
      listed.map((u: any) => u.email_address),
      ['g2@example.com'],
    );
    assert.equal(await page.getByRole('row', { name: /other-account@example\.com/ }).count(), 0);
    assert.deepEqual(await h.axeViolations(page), []);
    await h.shot(page, 'settings-unsubscribes');
    assert.deepEqual(problems, []);
    await close();
  });

  it('pages a list of hundreds of rows', async () => {
    const many = Array.from({ length: 120 }, (_, i) => `bulk${i}@example.com`).join(',');
    assert.equal((await t.a.post('/global-unsubscribes/save', { email_address: many })).status, 200);
    const total = (await t.a.get('/global-unsubscribes', { page: 1, per_page: 1 })).body.message.meta.total;
    assert.ok(total >= 120);
    const { page, problems, close } = await openSettings('Global unsubscribes');
    const rows = page.getByRole('table').locator('tbody tr');
    await page.getByText(`Page 1 of 3 · ${total} addresses`).waitFor();
    assert.equal(await rows.count(), 50);
    assert.equal(await page.getByRole('button', { name: 'Previous page' }).isDisabled(), true);
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByText(`Page 2 of 3 · ${total} addresses`).waitFor();
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByText(`Page 3 of 3 · ${total} addresses`).waitFor();
    // The page number moves at the click; the rows when the page has loaded.
    await page.waitForFunction((n) => document.querySelectorAll('main tbody tr').length === n, total - 100);
    assert.equal(await rows.count(), total - 100);
    assert.equal(await page.getByRole('button', { name: 'Next page' }).isDisabled(), true);
    assert.deepEqual(problems, []);
    await close();
  });

  it('lists suppressed addresses and lifts one', async () => {
    for (const [c, email] of [
      [t.a, 'gone@example.com'],
      [t.b, 'other-gone@example.com'],
    ] as const) {
      const r = await c.post('/bounces/report', { email, type: 'hard', reason: '550 5.1.1 user unknown' });
      assert.equal(r.status, 200, r.text);
    }
    const { page, problems, close } = await openSettings('Suppressions');
    const row = page.getByRole('row', { name: /gone@example\.com/ });
    assert.match(await row.innerText(), /gone@example\.com\s+Hard bounce\s+550 5\.1\.1 user unknown/);
    assert.equal(await page.getByRole('row', { name: /other-gone@example\.com/ }).count(), 0);
    assert.deepEqual(await h.axeViolations(page), []);
    await h.shot(page, 'settings-suppressions');
    await row.getByRole('button', { name: /^Lift/ }).click();
    await row.getByRole('button', { name: 'Yes, lift it' }).click();
    await status(page, 'gone@example.com is no longer suppressed.');
    await page.getByRole('cell', { name: 'No suppressed addresses.' }).waitFor();
    assert.deepEqual((await t.a.get('/suppressions')).body.message.suppressions, []);
    assert.equal((await t.b.get('/suppressions')).body.message.suppressions.length, 1);
    assert.deepEqual(problems, []);
    await close();
  });

  it('adds and deletes a notification recipient', async () => {
    assert.equal((await t.b.post('/notification-recipient/save', { email_address: 'b-ops@example.com', email_owner: 'B' })).status, 200);
    const { page, problems, close } = await openSettings('Notification recipients');
    await page.getByRole('button', { name: 'Add recipient' }).click();
    await page.getByRole('alert').waitFor();
    assert.equal(await page.getByLabel('Email address').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.getByLabel('Owner').getAttribute('aria-invalid'), 'true');
    await page.getByLabel('Email address').fill('ops@example.com');
    await page.getByLabel('Owner').fill('Ops team');
    await page.getByRole('button', { name: 'Add recipient' }).click();
    await status(page, 'ops@example.com added.');
    const row = page.getByRole('row', { name: /ops@example\.com/ });
    assert.match(await row.innerText(), /ops@example\.com\s+Ops team/);
    assert.equal(await page.getByRole('row', { name: /b-ops@example\.com/ }).count(), 0);
    assert.deepEqual(
      (await t.a.get('/notification-recipients')).body.message.notifications.map((n: any) => [n.email_address, n.email_owner]),
      [['ops@example.com', 'Ops team']],
    );
    assert.deepEqual(await h.axeViolations(page), []);
    await h.shot(page, 'settings-notifications');
    // By keyboard: asking moves the focus to Cancel, and Cancel gives it back.
    await row.getByRole('button', { name: /^Delete/ }).focus();
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Cancel');
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Delete ops@example.com');
    await row.getByRole('button', { name: /^Delete/ }).click();
    await row.getByRole('button', { name: 'Yes, delete' }).click();
    await status(page, 'ops@example.com removed.');
    await page.getByRole('cell', { name: 'No notification recipients yet.' }).waitFor();
    assert.deepEqual((await t.a.get('/notification-recipients')).body.message.notifications, []);
    assert.deepEqual(unexpected(problems, 422), []);
    await close();
  });

  it('creates a webhook endpoint showing its secret once, logs a delivery with retry, disables, rotates, edits and deletes it', async () => {
    const receiver = await Receiver.start();
    const worker = startJobs(t.app.deps, { lanes: ['webhooks'], loop: false });
    const drain = async () => {
      for (let n = await worker.tick(); n > 0; n = await worker.tick());
    };
    try {
      assert.equal((await t.b.post('/webhooks/endpoints/create', { url: receiver.url('/other-account'), events: ['*'] })).status, 200);
      const { page, problems, close } = await openSettings('Webhooks');
      await page.getByRole('cell', { name: 'No webhook endpoints yet.' }).waitFor();
      await page.getByLabel('Endpoint URL').fill(receiver.url('/hook'));
      assert.equal(await page.getByLabel('All events').isChecked(), true);
      assert.equal(await page.getByLabel('message.opened').isDisabled(), true);
      await page.getByLabel('Description').fill('Console test');
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await status(page, 'created');

      const box = page.getByRole('region', { name: 'Signing secret' });
      const secret = await box.locator('code').innerText();
      assert.match(secret, /^whsec_[A-Za-z0-9+/=]+$/);
      assert.match(await box.innerText(), /it will not be shown again/);
      const endpoints = (await t.a.get('/webhooks/endpoints')).body.message.endpoints as Array<Record<string, any>>;
      assert.deepEqual(
        endpoints.map((e) => [e.url, e.events, e.description, e.enabled]),
        [[receiver.url('/hook'), ['*'], 'Console test', 1]],
      );
      const id = endpoints[0].id;
      const row = page.getByRole('row', { name: /\/hook/ });
      assert.match(await row.innerText(), /All events\s+Enabled/);
      assert.equal(await page.getByRole('row', { name: /other-account/ }).count(), 0);
      assert.deepEqual(await h.axeViolations(page), []);
      await h.shot(page, 'settings-webhooks');
      // Shown once: a new visit of the page has no secret.
      await page.reload();
      await page.getByRole('row', { name: /\/hook/ }).waitFor();
      assert.equal(await page.getByRole('region', { name: 'Signing secret' }).count(), 0);
      assert.equal(await page.getByText(secret).count(), 0);

      // Before any event: the empty log.
      await row.getByRole('link', { name: /^Deliveries/ }).click();
      await page.getByRole('heading', { level: 1, name: 'Deliveries' }).waitFor();
      await page.getByRole('cell', { name: /No deliveries yet/ }).waitFor();

      // An event (an address unsubscribed), delivered, then in the log; Retry sends it again.
      assert.equal((await t.a.post('/global-unsubscribes/save', { email_address: 'hooked@example.com' })).status, 200);
      await drain();
      assert.deepEqual(
        receiver.received.map((r) => r.path),
        ['/hook'],
      );
      await page.getByRole('button', { name: 'Refresh' }).click();
      const attempt = page.getByRole('row', { name: /contact\.unsubscribed/ });
      assert.match(await attempt.innerText(), /contact\.unsubscribed\s+evt_\S+\s+1\s+200\s+\d+ ms/);
      assert.deepEqual(await h.axeViolations(page), []);
      await h.shot(page, 'settings-webhook-deliveries');
      await attempt.getByRole('button', { name: /^Retry/ }).click();
      await status(page, 'will be sent again now');
      await drain();
      assert.equal(receiver.received.length, 2);
      assert.equal(receiver.received[1].headers['webhook-id'], receiver.received[0].headers['webhook-id']);

      // Another account's endpoint has no log here.
      const foreign = (await t.b.get('/webhooks/endpoints')).body.message.endpoints[0].id;
      await page.goto(`${base}/app/settings/webhooks/${foreign}`);
      await page.getByRole('heading', { level: 1, name: 'Endpoint not found' }).waitFor();
      await page.goto(`${base}/app/settings/webhooks/${id}`);
      await page.getByRole('link', { name: '← Webhooks' }).click();

      await row.getByRole('button', { name: /^Disable/ }).click();
      await status(page, 'disabled.');
      assert.match(await row.innerText(), /Disabled/);
      assert.equal((await t.a.get('/webhooks/endpoints')).body.message.endpoints[0].enabled, 0);

      await row.getByRole('button', { name: /^Rotate secret/ }).click();
      await row.getByRole('button', { name: 'Yes, rotate' }).click();
      const rotated = await page.getByRole('region', { name: 'Signing secret' }).locator('code').innerText();
      assert.match(rotated, /^whsec_/);
      assert.notEqual(rotated, secret);
      await page.getByRole('button', { name: 'I have copied it' }).click();
      assert.equal(await page.getByRole('region', { name: 'Signing secret' }).count(), 0);

      await row.getByRole('button', { name: /^Edit/ }).click();
      await page.getByLabel('All events').uncheck();
      await page.getByLabel('message.opened').check();
      await page.getByLabel('message.clicked').check();
      await page.getByRole('button', { name: 'Save changes' }).click();
      await status(page, 'saved.');
      assert.match(await row.innerText(), /message\.opened, message\.clicked|message\.clicked, message\.opened/);
      const [after] = (await t.a.get('/webhooks/endpoints')).body.message.endpoints;
      assert.deepEqual([...after.events].sort(), ['message.clicked', 'message.opened']);
      assert.equal(after.description, 'Console test');

      await row.getByRole('button', { name: /^Delete/ }).click();
      await row.getByRole('button', { name: 'Yes, delete' }).click();
      await page.getByRole('cell', { name: 'No webhook endpoints yet.' }).waitFor();
      assert.deepEqual((await t.a.get('/webhooks/endpoints')).body.message.endpoints, []);
      // The visit of another account's log is a 404 the page shows as "not found".
      assert.deepEqual(unexpected(problems, 404), []);
      await close();
    } finally {
      await worker.stop();
      await receiver.close();
    }
  });

  it('keeps the pages within a phone-sized screen', async () => {
    const { context, page, problems } = await h.open({ viewport: { width: 360, height: 740 } });
    await h.signIn(page);
    for (const path of ['senders', 'groups', 'unsubscribes', 'suppressions', 'notifications', 'webhooks']) {
      await page.goto(`${base}/app/settings/${path}`);
      await page.getByRole('heading', { level: 1 }).waitFor();
      await page.getByRole('table').waitFor();
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `no sideways scroll on ${path}`);
    }
    await h.shot(page, 'settings-webhooks-phone');
    assert.deepEqual(problems, []);
    await context.close();
  });
});
