/**
 * The console's second pass, page by page, in chromium (see browser.ts for the harness): a new
 * account's next steps on the overview, the contacts list's page count and its search box, no
 * Edit for a send that is queued or sending, and the public preferences page naming the sender;
 * at 1280 px and at 390 px where it is about layout. Axe and screenshots.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { trackingLinks } from '../../src/delivery/tracking.js';
import { drainQueue, make } from '../helpers.js';
import { skipWithoutChromium, startConsole, type ConsoleHarness } from './browser.js';
import { seedAccount, sender, type Seeded } from './second-pass.seed.js';
import { WIDTHS } from './second-pass.layout.js';

describe('the console’s pages, second pass', { skip: skipWithoutChromium }, () => {
  let h: ConsoleHarness;
  let seeded: Seeded;

  before(async () => {
    h = await startConsole({ webhooksAllowPrivate: true });
    seeded = await seedAccount(h.t, 'http://127.0.0.1:9/hook');
    // 60 contacts in all: two pages of 50.
    for (let i = 0; i < 55; i++) await make.contact(h.t.a, { contact_type_id: seeded.typeId, email: `reader.${i}@example.com` });
  });
  after(async () => {
    await h?.close();
  });

  /** The steps of the overview's "Your first campaign": each link's name and whether it is ticked. */
  const steps = (page: Page) =>
    page
      .getByRole('region', { name: 'Your first campaign' })
      .getByRole('listitem')
      .evaluateAll((items) => items.map((li) => [li.querySelector('a')!.firstChild!.textContent!.trim(), li.classList.contains('done')]));

  it('shows a new account its next steps, each a link, ticked as they are done', async () => {
    const b = h.t.b;
    const { context, page, problems } = await h.open({ viewport: { width: 390, height: 844 } });
    await h.signIn(page, b.keys!);
    const region = page.getByRole('region', { name: 'Your first campaign' });
    await region.waitFor();
    assert.deepEqual(await steps(page), [
      ['Add a sender', false],
      ['Authenticate your domain', false],
      ['Import contacts', false],
      ['Make a design', false],
      ['Send your first campaign', false],
    ]);
    assert.equal(await region.getByText('0 of 5 steps done.').count(), 1);
    assert.deepEqual(await h.axeViolations(page), []);
    await h.shot(page, 'second-pass-overview-new-390');

    // A sender added but not verified yet: not done, and the page says what is left to do.
    const unverified = await sender(h.t, b, { nickname: 'first' }, false);
    await make.contact(b);
    await page.reload();
    await region.getByText('Open the link mailed to its address to verify it.').waitFor();
    assert.deepEqual(await steps(page), [
      ['Add a sender', false],
      ['Authenticate your domain', false],
      ['Import contacts', true],
      ['Make a design', false],
      ['Send your first campaign', false],
    ]);
    await h.t.database.db.updateTable('senders').set({ is_verified: 1 }).where('id', '=', unverified).execute();
    await page.reload();
    await region.getByText('2 of 5 steps done.').waitFor();
    assert.equal(await region.getByRole('link', { name: 'Add a sender (done)' }).count(), 1);
    await region.getByRole('link', { name: 'Make a design' }).click();
    await page.getByRole('heading', { level: 1, name: 'New design' }).waitFor();
    await h.shot(page, 'second-pass-overview-steps-390');

    // An account that has sent its first campaign, from an authenticated domain, sees its figures only.
    await page.getByRole('link', { name: '← Designs' }).click();
    await context.close();
    const domain = await h.t.a.post('/sending-domains/create', { domain: 'first-steps.example.com' });
    assert.equal(domain.status, 200, domain.text);
    await h.t.database.db
      .updateTable('sending_domains')
      .set({ status: 'verified' })
      .where('id', '=', domain.body.message.domain.id)
      .execute();
    const other = await h.open({ viewport: { width: 1280, height: 900 } });
    await h.signIn(other.page);
    await other.page.getByText('Messages sent').waitFor();
    assert.equal(await other.page.getByRole('region', { name: 'Your first campaign' }).count(), 0);
    assert.deepEqual([...problems, ...other.problems], []);
    await other.context.close();
  });

  for (const size of WIDTHS) {
    it(`counts the contacts’ pages and shows the whole search hint at ${size.width} px`, async () => {
      const { context, page, problems } = await h.open({ viewport: { width: size.width, height: size.height } });
      await h.signIn(page);
      await page.goto(`${h.base}/app/contacts`);
      await page.getByText('Page 1 of 2 · 60 contacts').waitFor();

      // The placeholder fits its box: its text is no wider than the box's inside.
      const fit = await page.getByLabel('Search by email').evaluate((el) => {
        const input = el as HTMLInputElement;
        const style = getComputedStyle(input);
        const ctx = document.createElement('canvas').getContext('2d')!;
        ctx.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
        const inside = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
        return { text: input.placeholder, width: Math.ceil(ctx.measureText(input.placeholder).width), inside };
      });
      assert.ok(fit.text.length > 0 && fit.width <= fit.inside, JSON.stringify(fit));
      await h.shot(page, `second-pass-contacts-pages-${size.width}`);

      await page.getByRole('button', { name: 'Next page' }).click();
      await page.getByText('Page 2 of 2 · 60 contacts').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Next page' }).isDisabled(), true);

      // A search counts nothing until its last page: one page, its count known (a single page shows its count alone).
      await page.getByLabel('Search by email').fill('margaret');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await page.getByText('1 contact found', { exact: true }).waitFor();
      await page.getByLabel('Search by email').fill('reader.');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await page.getByText('Page 1 · more on the next page').waitFor();
      await page.getByRole('button', { name: 'Next page' }).click();
      await page.getByText('Page 2 of 2 · 55 contacts found').waitFor();
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1));
      assert.deepEqual(await h.axeViolations(page), []);
      assert.deepEqual(problems, []);
      await context.close();
    });
  }

  it('offers Edit only for a draft or a send scheduled for later, never for one queued or sending', async () => {
    const { context, page, problems } = await h.open({ viewport: { width: 1280, height: 900 } });
    await h.signIn(page);
    await page.goto(`${h.base}/app/single-sends`);
    const row = (name: string) => page.getByRole('row', { name: new RegExp(name) });
    await row('Weekly digest').waitFor();
    const edits = async (name: string) =>
      row(name)
        .getByRole('link', { name: `Edit ${name}` })
        .count();
    assert.equal(await edits('Autumn news'), 1);
    assert.equal(await edits('Spring sale for returning customers'), 1);
    for (const name of ['Weekly digest', 'Black Friday preview', 'Summer recap']) {
      assert.equal(await edits(name), 0, name);
      assert.equal(
        await row(name)
          .getByRole('link', { name: `Report of ${name}` })
          .count(),
        1,
        name,
      );
      assert.doesNotMatch((await row(name).getByRole('link', { name, exact: true }).getAttribute('href'))!, /\/edit$/, name);
    }
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('names the sender on the preferences page', async () => {
    const { t } = h;
    const r = await t.a.post('/single/send/create', {
      template_id: 1,
      template_html: '<html><body><p>Hello</p></body></html>',
      sender_id: (await t.a.get('/senders')).body.message.senders.find((s: { is_verified: number }) => s.is_verified === 1).id,
      unsubscribe_group_id: seeded.groupId,
      single_send_name: 'Preferences check',
      subject: 'Hello',
      preheader: 'A check',
      recipient_id: [`contacts_${seeded.typeId}`],
      schedule_type: 0,
    });
    assert.equal(r.status, 200, r.text);
    await drainQueue(t);
    const message = await t.database.db
      .selectFrom('mail_messages')
      .innerJoin('single_sends', 'single_sends.id', 'mail_messages.single_send_id')
      .select('mail_messages.id')
      .where('single_sends.utr', '=', r.body.message.utr)
      .where('mail_messages.email', '=', 'margaret.hamilton@example.com')
      .executeTakeFirstOrThrow();
    const url = h.base + new URL(trackingLinks(t.config).unsubscribeUrl(message.id)).pathname;
    for (const size of WIDTHS) {
      const { context, page, problems } = await h.open({ viewport: { width: size.width, height: size.height } });
      await page.goto(url);
      assert.equal(
        (await page.locator('main p, body > p, p').first().innerText()).trim(),
        'Choose which emails margaret.hamilton@example.com receives from Acme Newsletter.',
      );
      await page.getByText('No email of any kind from Acme Newsletter.').waitFor();
      assert.equal(await page.getByText('from us').count(), 0);
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1));
      await h.shot(page, `second-pass-preferences-${size.width}`);
      assert.deepEqual(problems, []);
      await context.close();
    }
  });
});
