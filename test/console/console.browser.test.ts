/**
 * The console in a real browser (see browser.ts for the harness): sign-in, every section with axe
 * and a screenshot, contacts, XSS, a phone-sized screen, the first page's weight.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { make, type TestContext } from '../helpers.js';
import { skipWithoutChromium, startConsole, type ConsoleHarness } from './browser.js';

const SECTIONS = ['Overview', 'Contacts', 'Segments', 'Designs', 'Media', 'Single sends', 'Automations', 'Settings'];

describe('the console in chromium', { skip: skipWithoutChromium }, () => {
  let h: ConsoleHarness;
  let t: TestContext;
  let base: string;
  const open: ConsoleHarness['open'] = (o) => h.open(o);
  const signIn: ConsoleHarness['signIn'] = (p, k) => h.signIn(p, k);
  const axeViolations: ConsoleHarness['axeViolations'] = (p) => h.axeViolations(p);
  const shot: ConsoleHarness['shot'] = (p, n) => h.shot(p, n);

  before(async () => {
    h = await startConsole();
    t = h.t;
    base = h.base;
  });
  after(async () => {
    await h?.close();
  });

  it('refuses a wrong password with an alert, and keeps nothing', async () => {
    const { context, page, problems } = await open();
    await page.goto(`${base}/app`);
    await h.fillSignIn(page, (await h.owner()).email, 'not the password at all');
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.equal(await alert.textContent(), 'Invalid email or password');
    assert.equal(await page.evaluate(() => sessionStorage.length), 0);
    assert.deepEqual(await context.cookies(), []);
    assert.deepEqual(await axeViolations(page), []);
    await shot(page, 'sign-in-refused');
    // The 401 of the sign-in is the one console error expected here.
    assert.deepEqual(
      problems.filter((p) => !p.includes('401')),
      [],
    );
    await context.close();
  });

  it('signs in, shows each section with its heading, passes axe on every page, and signs out', async () => {
    const { context, page, problems } = await open();
    await signIn(page);
    // No key in the browser: the session is an HttpOnly cookie no script reads.
    assert.equal(await page.evaluate(() => sessionStorage.length), 0);
    assert.deepEqual(
      (await context.cookies()).map((c) => [c.name, c.httpOnly, c.sameSite]),
      [['campaign_session', true, 'Strict']],
    );
    assert.equal(await page.evaluate(() => document.cookie), '');
    // Only a mark that this browser holds a session (so a new tab asks who is signed in), no secret.
    assert.deepEqual(await page.evaluate(() => Object.entries(localStorage)), [['campaign.session', 'signed-in']]);
    const nav = page.getByRole('navigation', { name: 'Main' });
    for (const name of SECTIONS) {
      await nav.getByRole('link', { name, exact: true }).click();
      await page.getByRole('heading', { level: 1, name }).waitFor();
      assert.equal(await nav.getByRole('link', { name, exact: true }).getAttribute('aria-current'), 'page');
      if (name === 'Overview') await page.locator('.chart canvas').waitFor();
      assert.deepEqual(await axeViolations(page), [], `axe on ${name}`);
      await shot(page, name.toLowerCase().replace(' ', '-'));
    }
    // A reload keeps the page and the session (the cookie; GET /session tells the page who is signed in).
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    assert.deepEqual(await context.cookies(), []);
    assert.equal(await page.evaluate(() => localStorage.length), 0);
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('adds a contact type and a contact, finds the contact by search, edits and deletes it', async () => {
    const { context, page, problems } = await open();
    await signIn(page);
    await page.getByRole('navigation').getByRole('link', { name: 'Contacts' }).click();
    await page.getByLabel('New contact type').fill('Customers');
    await page.getByRole('button', { name: 'Add contact type' }).click();
    await page.getByRole('status').filter({ hasText: 'Contact type “Customers” added.' }).waitFor();
    await page.getByRole('link', { name: 'Add a contact' }).click();
    await page.getByRole('heading', { level: 1, name: 'Add a contact' }).waitFor();
    await page.getByLabel('Contact type').selectOption({ label: 'Customers' });
    await page.getByLabel('First name').fill('Grace');
    await page.getByLabel('Last name').fill('Hopper');
    await page.getByLabel('Email', { exact: true }).fill('grace@example.com');
    await page.getByLabel('Country').selectOption({ label: 'India' });
    await page.getByRole('button', { name: 'Add contact' }).click();
    await page.getByRole('heading', { level: 1, name: 'Grace Hopper' }).waitFor();
    assert.deepEqual(await axeViolations(page), []);
    await shot(page, 'contact');

    await page.getByRole('link', { name: '← Contacts' }).click();
    await page.getByLabel('Search by email').fill('GRACE@');
    await page.getByRole('button', { name: 'Search' }).click();
    const row = page.getByRole('row', { name: /grace@example\.com/ });
    assert.match(await row.innerText(), /Grace Hopper\s+grace@example\.com\s+Customers\s+India/);
    await row.getByRole('link', { name: 'Grace Hopper' }).click();

    await page.getByLabel('Last name').fill('Brewster Hopper');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await page.getByRole('heading', { level: 1, name: 'Grace Brewster Hopper' }).waitFor();
    await page.getByRole('button', { name: 'Delete contact' }).click();
    await page.getByRole('button', { name: 'Delete this contact for good' }).click();
    await page.getByRole('heading', { level: 1, name: 'Contacts' }).waitFor();
    await page.getByRole('cell', { name: 'No contacts yet.' }).waitFor();
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('shows a wrong email as a field error, named on the field', async () => {
    const { context, page } = await open();
    await make.contactType(t.a, 'Leads');
    await signIn(page);
    await page.goto(`${base}/app/contacts/new`);
    await page.getByLabel('Contact type').selectOption({ label: 'Leads' });
    await page.getByLabel('Country').selectOption({ label: 'India' });
    await page.getByLabel('Email', { exact: true }).fill('not-an-address');
    await page.getByRole('button', { name: 'Add contact' }).click();
    assert.equal(await page.getByRole('alert').textContent(), 'The email must be a valid email address.');
    assert.equal(await page.getByLabel('Email', { exact: true }).getAttribute('aria-invalid'), 'true');
    await context.close();
  });

  it('shows an XSS payload in contact fields as text: no script runs', async () => {
    const payload = '<img src=x onerror="window.__xss=1;alert(1)"><script>window.__xss=2</script>';
    const id = await make.contact(t.a, { first_name: payload, last_name: '"><svg onload=alert(3)>', email: 'xss@example.com' });
    const { context, page, problems } = await open();
    await signIn(page);
    await page.getByRole('navigation').getByRole('link', { name: 'Contacts' }).click();
    const link = page.getByRole('link', { name: `${payload} "><svg onload=alert(3)>` });
    await link.waitFor();
    await link.click();
    await page.getByRole('heading', { level: 1, name: `${payload} "><svg onload=alert(3)>` }).waitFor();
    assert.equal(await page.getByLabel('First name').inputValue(), payload);
    assert.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined);
    assert.equal(await page.locator('main img, main script, main svg').count(), 0);
    assert.ok(page.url().endsWith(`/app/contacts/${id}`));
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('works on a phone-sized screen with the keyboard: the menu opens the navigation, nothing scrolls sideways', async () => {
    const { context, page, problems } = await open({
      viewport: { width: 360, height: 740 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
    });
    const owner = await h.owner();
    await page.goto(`${base}/app/contacts`);
    // Keyboard only: the fields and the button in order.
    await page.getByLabel('Email', { exact: true }).focus();
    await page.keyboard.type(owner.email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(owner.password);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Contacts' }).waitFor();
    assert.equal(await page.getByRole('navigation', { name: 'Main' }).isVisible(), false);
    const menu = page.getByRole('button', { name: 'Menu' });
    await menu.focus();
    await page.keyboard.press('Enter');
    assert.equal(await menu.getAttribute('aria-expanded'), 'true');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    assert.equal(await page.getByRole('navigation', { name: 'Main' }).isVisible(), false, 'the menu closes after a choice');
    const width = await page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      client: document.documentElement.clientWidth,
    }));
    assert.ok(width.scroll <= width.client, `page wider than the screen: ${width.scroll} > ${width.client}`);
    await page.goto(`${base}/app/contacts`);
    await page.getByRole('heading', { level: 1, name: 'Contacts' }).waitFor();
    const wide = await page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      client: document.documentElement.clientWidth,
    }));
    assert.ok(wide.scroll <= wide.client, `contacts wider than the screen: ${wide.scroll} > ${wide.client}`);
    await shot(page, 'contacts-phone');
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("keeps the first page's JavaScript within 150 KB gzipped; the chart, the editor and the QR code generator are loaded apart", () => {
    const index = readFileSync(join(h.dir, 'index.html'), 'utf8');
    const scripts = [...index.matchAll(/(?:src|href)="\/app\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]);
    assert.ok(scripts.length >= 1, index);
    const gzipped = scripts.reduce((n, file) => n + gzipSync(readFileSync(join(h.dir, file))).length, 0);
    assert.ok(gzipped <= 150 * 1024, `first page JavaScript: ${gzipped} bytes gzipped`);
    const entry = readFileSync(join(h.dir, scripts[0]), 'utf8');
    // Strings of the libraries' own code (their file names do appear, in the map of lazy chunks).
    assert.doesNotMatch(entry, /u-over/, 'uPlot is not in the first page');
    assert.doesNotMatch(entry, /gjs-padding-v-el/, 'GrapesJS is not in the first page');
    assert.doesNotMatch(entry, /getBCHTypeInfo/, 'the QR code generator is not in the first page');
    const lazy = readdirSync(join(h.dir, 'assets')).filter((f) => f.endsWith('.js') && !scripts.includes(`assets/${f}`));
    const text = (f: string) => readFileSync(join(h.dir, 'assets', f), 'utf8');
    assert.ok(
      lazy.some((f) => text(f).includes('u-over')),
      'uPlot is in a chunk of its own',
    );
    assert.ok(
      lazy.some((f) => text(f).includes('gjs-padding-v-el')),
      'GrapesJS is in a chunk of its own',
    );
    assert.ok(
      lazy.some((f) => text(f).includes('getBCHTypeInfo')),
      'the QR code generator is in a chunk of its own, loaded with the two-factor set-up',
    );
  });
});
