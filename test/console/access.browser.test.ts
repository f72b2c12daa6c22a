/**
 * People and access in the console, in chromium (see browser.ts for the harness), on the test
 * clock: sign-in by email and password, the two-factor code and a recovery code, two tabs of one
 * browser, the People, API keys, Audit log and My account pages (the QR code made in the page, a
 * key's secret shown once and copied), the invitation and reset pages (a used link's 410 shown),
 * and a viewer who is offered no button that would fail. axe-core on every page, screenshots at
 * 1280 and 390 px wide.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as OTPAuth from 'otpauth';
import type { Page } from 'playwright-core';
import type { TestClock } from '../../src/util/clock.js';
import { Client, make } from '../helpers.js';
import { automationBase, createAutomation, automationForm } from '../modules/automations.helpers.js';
import { createSend, sendForm } from '../modules/single-sends.helpers.js';
import { createSegment } from '../modules/segments.helpers.js';
import { mailedLink, PASSWORD, person } from '../modules/access/sessions.helpers.js';
import { mjmlText } from '../support/designs.js';
import { skipWithoutChromium, startConsole, type ConsoleHarness } from './browser.js';

/** The code an authenticator app shows for `secret` at `at` (ms). */
const totp = (secret: string, at: number) =>
  new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: at });

/** The names of controls that would change something. */
const WRITE =
  /^(Add|Save|Delete|Remove|Create|New|Import|Send|Duplicate|Edit|Set live|Pause|Rotate|Lift|Resend|Enable|Disable|Retry|Turn|Invite|Revoke|Change role|Review)\b/;

describe('people and access in the console', { skip: skipWithoutChromium }, () => {
  let h: ConsoleHarness;
  let clock: TestClock;

  before(async () => {
    h = await startConsole({ webhooksAllowPrivate: true }, { clock: '2030-01-01T00:00:00.000Z' });
    clock = h.t.clock as TestClock;
  });
  after(async () => {
    await h?.close();
  });

  const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name }).waitFor();
  const status = (page: Page, text: string | RegExp) => page.getByRole('status').filter({ hasText: text }).waitFor();
  const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();

  async function signInAs(page: Page, email: string, password = PASSWORD) {
    await page.goto(`${h.base}/app`);
    await h.fillSignIn(page, email, password);
    await heading(page, 'Overview');
  }

  /** axe-core clean, and a screenshot at 1280 and at 390 px wide (no sideways scroll on the phone). */
  async function check(page: Page, name: string) {
    assert.deepEqual(await h.axeViolations(page), [], `axe on ${name}`);
    await page.setViewportSize({ width: 1280, height: 900 });
    await h.shot(page, `${name}-1280`);
    await page.setViewportSize({ width: 390, height: 844 });
    const width = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
    assert.ok(width[0] <= width[1], `${name} wider than a phone: ${width}`);
    await h.shot(page, `${name}-390`);
    await page.setViewportSize({ width: 1280, height: 900 });
  }

  it('signs in by email and password, shows the service’s words for a wrong one, and links the first owner’s way in', async () => {
    const { context, page, problems } = await h.open();
    await page.goto(`${h.base}/app/contacts`);
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    await page.getByText('First time here?').click();
    await page.getByText('OWNER_EMAIL=you@example.com').waitFor();
    await check(page, 'access-sign-in');
    const owner = await h.owner();
    await h.fillSignIn(page, owner.email, 'a wrong password, long enough');
    assert.equal(await page.getByRole('alert').textContent(), 'Invalid email or password');
    await h.fillSignIn(page, owner.email, owner.password);
    // The page asked for stays: the contacts, now signed in, the owner named in the header.
    await heading(page, 'Contacts');
    await page.getByRole('link', { name: /^Your account:\s*Owner of account \d+ \(owner\)$/ }).waitFor();
    assert.deepEqual(
      problems.filter((p) => !p.includes('401')),
      [],
    );
    await context.close();
  });

  it('asks for the two-factor code on the test clock, takes a recovery code once, and turns two-factor off', async () => {
    const admin = await person(h.t, 'admin');
    const { context, page, problems } = await h.open({ permissions: ['clipboard-read', 'clipboard-write'] });
    await signInAs(page, admin.email);
    await nav(page, 'My account');
    await heading(page, 'My account');
    await page.getByRole('button', { name: 'Set up two-factor authentication' }).click();
    // The QR code is drawn in the page from the otpauth URL: an SVG path of its dark modules.
    const qr = page.getByRole('img', { name: 'QR code for your authenticator app' });
    await qr.waitFor();
    assert.ok(((await qr.locator('path').getAttribute('d')) ?? '').length > 500);
    const secret = (await page.locator('code.key').textContent())!;
    assert.match(secret, /^[A-Z2-7]{32}$/);
    await check(page, 'access-two-factor-setup');

    clock.advance(30_000);
    await page.getByLabel('Code from the app').fill(totp(secret, clock.now().getTime()));
    await page.getByRole('button', { name: 'Turn two-factor on' }).click();
    await page.getByRole('heading', { name: 'Recovery codes' }).waitFor();
    const codes = await page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem').allTextContents();
    assert.equal(codes.length, 10);
    await page.getByRole('button', { name: 'Copy the codes' }).click();
    await status(page, 'Recovery codes copied.');
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), codes.join('\n'));
    await check(page, 'access-recovery-codes');
    await page.getByRole('button', { name: 'I have saved them' }).click();
    await page.getByText('On: signing in asks for a code').waitFor();
    assert.equal(await page.getByRole('list', { name: 'Recovery codes' }).count(), 0, 'the codes are shown once');

    // Signing in again: the code is asked for; a wrong one is refused in the service's words.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await h.fillSignIn(page, admin.email, PASSWORD);
    const code = page.getByLabel('Two-factor code');
    await code.waitFor();
    await check(page, 'access-sign-in-code');
    await code.fill('000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Invalid two-factor code' }).waitFor();
    clock.advance(30_000);
    await code.fill(totp(secret, clock.now().getTime()));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await heading(page, 'Overview');

    // A recovery code works in place of a code, once.
    await page.getByRole('button', { name: 'Sign out' }).click();
    for (const expected of ['Overview', 'Invalid two-factor code']) {
      await page.goto(`${h.base}/app`);
      await h.fillSignIn(page, admin.email, PASSWORD);
      await page.getByLabel('Two-factor code').fill(codes[0]);
      await page.getByRole('button', { name: 'Sign in' }).click();
      if (expected === 'Overview') {
        await heading(page, 'Overview');
        await page.getByRole('button', { name: 'Sign out' }).click();
      } else await page.getByRole('alert').filter({ hasText: expected }).waitFor();
    }
    clock.advance(30_000);
    await page.getByLabel('Two-factor code').fill(totp(secret, clock.now().getTime()));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await heading(page, 'Overview');

    await nav(page, 'My account');
    clock.advance(30_000);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Code', { exact: true }).fill(totp(secret, clock.now().getTime()));
    await page.getByRole('button', { name: 'Turn two-factor off' }).click();
    await status(page, 'Two-factor authentication is off.');
    assert.equal((await admin.get('/session')).body.message.user.two_factor, 0);
    assert.deepEqual(
      problems.filter((p) => !p.includes('401')),
      [],
    );
    await context.close();
  });

  it('works in two tabs: the second finds the session and makes changes; a sign-out in one signs the other out', async () => {
    const { context, page, problems } = await h.open();
    await h.signIn(page);
    const second = await context.newPage();
    await second.goto(`${h.base}/app/contacts`);
    await heading(second, 'Contacts');
    await second.getByLabel('New contact type').fill('From the second tab');
    await second.getByRole('button', { name: 'Add contact type' }).click();
    await status(second, 'Contact type “From the second tab” added.');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await second.getByRole('alert').filter({ hasText: 'You were signed out in another tab.' }).waitFor();
    // Signed in again in one tab: the other follows.
    const owner = await h.owner();
    await h.fillSignIn(page, owner.email, owner.password);
    await heading(page, 'Overview');
    await heading(second, 'Contacts');
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('lists, invites, changes the role of and removes people; the last owner stays', async () => {
    const owner = await h.owner();
    const { context, page, problems } = await h.open();
    await h.signIn(page);
    await nav(page, 'People');
    await heading(page, 'People');
    await page.getByRole('row', { name: new RegExp(owner.email.replace(/\./g, '\\.')) }).waitFor();
    // No role is chosen for the inviter: sending without one names the field.
    assert.equal(await page.getByLabel('Role', { exact: true }).inputValue(), '');
    await page.getByLabel('Email', { exact: true }).fill('new.viewer@example.com');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await page.locator('#e-invite-role', { hasText: 'The role field is required.' }).waitFor();
    await page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await status(page, 'new.viewer@example.com invited as viewer');
    const row = page.getByRole('row', { name: /new\.viewer@example\.com/ });
    assert.match(await row.innerText(), /Invited, not joined yet\s+new\.viewer@example\.com\s+viewer\s+Off\s+Never/);
    await check(page, 'access-people');

    await page.getByLabel('Role of new.viewer@example.com').selectOption('editor');
    await page.getByRole('button', { name: 'Change role of new.viewer@example.com' }).click();
    await status(page, 'new.viewer@example.com is now editor.');
    await page.getByRole('button', { name: 'Remove new.viewer@example.com' }).click();
    await page.getByRole('button', { name: 'Yes, remove' }).click();
    await status(page, 'new.viewer@example.com removed');
    assert.equal(await row.count(), 0);

    // The account's only owner cannot be removed: the service's 409 is shown.
    await page.getByRole('button', { name: `Remove ${owner.email}` }).click();
    await page.getByRole('button', { name: 'Yes, remove' }).click();
    await page.getByRole('alert').filter({ hasText: 'An account keeps at least one owner' }).waitFor();
    assert.deepEqual(
      problems.filter((p) => !/ (409|422) /.test(p)),
      [],
    );
    await context.close();
  });

  it('creates a scoped key whose secret is shown once and copied, shows its last use, and revokes it', async () => {
    const { context, page, problems } = await h.open({ permissions: ['clipboard-read', 'clipboard-write'] });
    await h.signIn(page);
    await nav(page, 'API keys');
    await heading(page, 'API keys');
    await page
      .getByRole('row', { name: /Default/ })
      .getByText('Full access')
      .waitFor();
    await page.getByLabel('Key name').fill('Shop');
    await page.getByLabel('contacts.write').check();
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('heading', { name: 'Secret key of Shop' }).waitFor();
    const secret = (await page.locator('#made-secret').textContent())!;
    const publicKey = (await page.locator('.secret-box code').first().textContent())!;
    assert.match(secret, /^sk_/);
    await page.getByRole('button', { name: 'Copy secret key' }).click();
    await status(page, 'Secret key copied.');
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
    // The bearer form of the same key, and a curl call with it on a route its scope allows.
    assert.equal(await page.locator('#made-bearer').textContent(), `${publicKey}.${secret}`);
    await page.getByRole('button', { name: 'Copy curl example' }).click();
    await status(page, 'Curl example copied.');
    const curl = await page.evaluate(() => navigator.clipboard.readText());
    assert.equal(curl, `curl '${h.base}/contacts-type' \\\n  -H 'Authorization: Bearer ${publicKey}.${secret}'`);
    const bearer = await h.t.app.inject({
      method: 'GET',
      url: '/contacts-type',
      headers: { authorization: `Bearer ${publicKey}.${secret}` },
    });
    assert.equal(bearer.statusCode, 200);
    await check(page, 'access-keys');

    // The key works within its scopes only, and its use shows.
    const key = new Client(h.t.app, { user_id: 0, public_key: publicKey, secret_key: secret });
    assert.equal((await key.get('/contacts-type')).status, 200);
    assert.equal((await key.post('/segment/create', {})).status, 403);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    assert.ok(!(await page.content()).includes(secret), 'the secret is gone from the page');
    await page.reload();
    const row = page.getByRole('row', { name: /Shop/ });
    assert.match(await row.innerText(), /contacts\.write[\s\S]*2030-01-01 00:0\d UTC/);
    assert.ok(!(await page.content()).includes(secret));

    await page.getByRole('button', { name: 'Revoke Shop' }).click();
    await page.getByRole('button', { name: 'Yes, revoke' }).click();
    await status(page, 'Key Shop revoked');
    assert.equal(await row.count(), 0);
    assert.equal((await key.get('/contacts-type')).status, 401);
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('filters and pages the audit log', async () => {
    for (let i = 0; i < 55; i++) await make.contactType(h.t.a, `Audited ${i}`);
    const { context, page, problems } = await h.open();
    await h.signIn(page);
    await nav(page, 'Audit log');
    await heading(page, 'Audit log');
    const rows = page.locator('tbody tr');
    await page.getByText(/^Page 1 of \d+/).waitFor();
    assert.equal(await rows.count(), 50);
    await check(page, 'access-audit-log');
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByText(/^Page 2 of \d+/).waitFor();

    await page.getByLabel('Action', { exact: true }).fill('POST /contacts-type/add');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText(/^Page 1 of 2 · 5\d entries/).waitFor();
    for (const action of await page.locator('tbody td[data-label="Action"]').allTextContents())
      assert.equal(action, 'POST /contacts-type/add');

    // The actor's name filters by that actor; a time range with nothing in it shows nothing.
    await page.getByRole('button', { name: 'Show only entries by Default' }).first().click();
    assert.equal(await page.getByLabel('Actor type').inputValue(), 'key');
    await page.getByText(/^Page 1 of 2/).waitFor();
    await page.getByLabel('Since').fill('2031-01-01T00:00');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('cell', { name: 'No entries.' }).waitFor();
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.getByText(/^Page 1 of \d+/).waitFor();
    assert.equal(await rows.count(), 50);
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('accepts an invitation and resets a password on their pages; a used link shows why it fails', async () => {
    const email = 'invited.editor@example.com';
    assert.equal((await h.t.a.post('/users/invite', { email, role: 'editor' })).status, 200);
    const invite = (await mailedLink(h.t, email)).url.replace('http://localhost:3000', h.base);
    const { context, page, problems } = await h.open();
    await page.goto(invite);
    await heading(page, 'Accept the invitation');
    await check(page, 'access-invite');
    await page.getByLabel('Your name').fill('Ida Editor');
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Password again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Accept and set the password' }).click();
    await status(page, 'Welcome: your account is ready.');
    await page.getByRole('link', { name: 'Sign in' }).click();
    await h.fillSignIn(page, email, PASSWORD);
    await heading(page, 'Overview');
    await page.getByRole('button', { name: 'Sign out' }).click();

    // The link again: used.
    await page.goto(invite);
    await page.getByLabel('Your name').fill('Someone else');
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Password again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Accept and set the password' }).click();
    await page.getByRole('alert').filter({ hasText: 'This link is no longer valid: it was used already' }).waitFor();

    // Forgot password: the link mailed, a new password set, the old one refused, the link used once.
    await page.goto(`${h.base}/app`);
    await page.getByRole('button', { name: 'Forgot password?' }).click();
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByRole('button', { name: 'Send the link' }).click();
    await status(page, `If ${email} belongs to a person of an account, a link to set a new password is on its way`);
    const reset = (await mailedLink(h.t, email)).url.replace('http://localhost:3000', h.base);
    assert.match(reset, /\/app\/reset\//);
    await page.goto(reset);
    await heading(page, 'Set a new password');
    await check(page, 'access-reset');
    const fresh = 'a brand new password for Ida';
    await page.getByLabel('New password', { exact: true }).fill(fresh);
    await page.getByLabel('New password again').fill(fresh);
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await status(page, 'Your new password is set');
    await page.getByRole('link', { name: 'Sign in' }).click();
    await h.fillSignIn(page, email, PASSWORD);
    await page.getByRole('alert').filter({ hasText: 'Invalid email or password' }).waitFor();
    await h.fillSignIn(page, email, fresh);
    await heading(page, 'Overview');
    await page.goto(reset);
    await page.getByLabel('New password', { exact: true }).fill(fresh);
    await page.getByLabel('New password again').fill(fresh);
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: 'This link is no longer valid: it was used already, or it is more than an hour old' })
      .waitFor();
    assert.deepEqual(
      problems.filter((p) => !/status of (401|410)/.test(p)),
      [],
    );
    await context.close();
  });

  it('offers a viewer no button that would fail, on every page, and says "Not allowed" where a page needs more', async () => {
    const t = h.t;
    const base = await automationBase({ ...t, clock }, t.a);
    const contact = await make.contact(t.a, { contact_type_id: base.type, email: 'seen@example.com' });
    const segment = await createSegment(t.a, {
      segment_name: 'Seen',
      contact_type_id: base.type,
      select_field: ['email'],
      select_operator: ['contains'],
      value: ['@'],
    });
    const design = await t.a.post('/designs/create', { name: 'Seen design', template_json: mjmlText('Hello') });
    const draft = await createSend(t.a, { ...sendForm(base, { single_send_name: 'Seen draft' }), draft: 1 });
    const automation = await createAutomation(t.a, automationForm(base, { automation_name: 'Seen automation' }));
    await t.a.post('/global-unsubscribes/save', { email_address: ['gone@example.com'] });
    await t.a.post('/notification-recipient/save', { email_address: 'boss@example.com', email_owner: 'Boss' });
    await t.a.post('/bounces/report', { email: 'bounced@example.com', type: 'hard', reason: '550 5.1.1 user unknown' });
    const hook = await t.a.post('/webhooks/endpoints/create', { url: 'http://127.0.0.1:9/hook', events: ['*'] });
    for (const r of [design, hook]) assert.equal(r.status, 200, r.text);

    const viewer = await person(t, 'viewer');
    const { context, page, problems } = await h.open();
    await signInAs(page, viewer.email);
    const navLinks = await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents();
    assert.deepEqual(navLinks, [
      'Overview',
      'Contacts',
      'Segments',
      'Designs',
      'Media',
      'Single sends',
      'Automations',
      'Settings',
      'Templates',
      'My account',
    ]);

    const pages: Array<[path: string, shows: string]> = [
      ['/', 'Overview'],
      ['/contacts', 'seen@example.com'],
      [`/contacts/${contact}`, 'Export data'],
      ['/contacts/fields', 'Your fields'],
      ['/segments', 'Seen'],
      [`/segments/${segment}`, 'seen@example.com'],
      ['/designs', 'Seen design'],
      [`/designs/${design.body.id}`, 'Design name'],
      ['/single-sends', 'Seen draft'],
      [`/single-sends/${draft}`, 'Seen draft'],
      ['/automations', 'Seen automation'],
      [`/automations/${automation}`, 'Seen automation'],
      ['/settings/senders', 'News'],
      ['/settings/groups', 'Newsletter'],
      ['/settings/unsubscribes', 'gone@example.com'],
      ['/settings/suppressions', 'bounced@example.com'],
      ['/settings/sunset', 'The policy is off.'],
      ['/settings/notifications', 'boss@example.com'],
      ['/settings/webhooks', 'http://127.0.0.1:9/hook'],
      [`/settings/webhooks/${hook.body.message.id}`, 'Deliveries'],
    ];
    for (const [path, shows] of pages) {
      await page.goto(`${h.base}/app${path}`);
      await page.getByRole('main').getByText(shows, { exact: false }).first().waitFor();
      await page.waitForLoadState('networkidle');
      const main = page.getByRole('main');
      const controls = [...(await main.getByRole('button').allTextContents()), ...(await main.getByRole('link').allTextContents())].map(
        (s) => s.trim(),
      );
      assert.deepEqual(
        controls.filter((c) => WRITE.test(c)),
        [],
        `write controls offered to a viewer on ${path}`,
      );
    }
    await check(page, 'access-viewer-webhook');

    for (const path of [
      '/people',
      '/keys',
      '/audit-log',
      '/contacts/new',
      '/contacts/import',
      '/segments/new',
      '/single-sends/new',
      `/single-sends/${draft}/edit`,
      '/automations/new',
      '/designs/new',
    ]) {
      await page.goto(`${h.base}/app${path}`);
      await heading(page, 'Not allowed');
    }
    await check(page, 'access-not-allowed');
    assert.deepEqual(problems, []);
    await context.close();
  });
});
