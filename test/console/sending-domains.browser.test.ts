/**
 * Sending domains in the console, in chromium (see browser.ts for the harness), against a DNS
 * server on loopback: the overview's first steps name "Authenticate your domain"; Settings →
 * Sending domains adds a domain, shows its records with copy buttons, checks it now and shows each
 * check with its message and the status; the senders page shows each sender's domain status.
 * Axe and screenshots at 1280 and 390 px.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { senderForm } from '../modules/senders.helpers.js';
import { DMARC_RUA, passingZone, SPF_INCLUDE, type DomainAnswer } from '../modules/sending-domains.helpers.js';
import { TestDnsServer } from '../support/dns-server.js';
import { skipWithoutChromium, startConsole, type ConsoleHarness } from './browser.js';
import { tableProblems, WIDTHS } from './second-pass.layout.js';

/** axe-core clean and a screenshot at each width; the page no wider than the screen, its tables whole. */
async function check(h: ConsoleHarness, page: Page, name: string) {
  for (const { width, height } of WIDTHS) {
    await page.setViewportSize({ width, height });
    assert.deepEqual(await h.axeViolations(page), [], `axe on ${name} at ${width} px`);
    const [scroll, client] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
    assert.ok(scroll <= client, `${name} wider than ${width} px: ${scroll}`);
    assert.deepEqual(await tableProblems(page), [], `${name} at ${width} px`);
    await h.shot(page, `${name}-${width}`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

describe('sending domains in the console', { skip: skipWithoutChromium }, () => {
  let h: ConsoleHarness;
  let dns: TestDnsServer;

  before(async () => {
    dns = await TestDnsServer.start();
    h = await startConsole({}, { env: { DNS_SERVERS: dns.address, SPF_INCLUDE, DMARC_RUA } });
  });
  after(async () => {
    await h?.close();
    await dns?.close();
  });

  it('adds a domain, shows what to publish, checks it, and shows the status on the senders page', async () => {
    const { t } = h;
    const { page, problems } = await h.open({ viewport: { width: 1280, height: 900 } });
    await h.signIn(page);
    await page.getByRole('link', { name: 'Authenticate your domain' }).waitFor();

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings', exact: true }).click();
    await page.getByRole('link', { name: 'Sending domains' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sending domains' }).waitFor();
    await page.getByLabel('Domain', { exact: true }).fill('not a domain');
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.getByText('The domain must be a valid domain.').first().waitFor();
    await page.getByLabel('Domain', { exact: true }).fill('news.example.com');
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.getByRole('heading', { level: 2, name: /news\.example\.com/ }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Copy value' }).count(), 3);
    assert.equal(await page.getByRole('button', { name: 'Copy host' }).count(), 3);
    await page.getByText('Not checked yet').first().waitFor();
    await check(h, page, 'sending-domains-added');

    const listed = await t.a.get('/sending-domains');
    const d: DomainAnswer = listed.body.message.domains[0];
    dns.zone = passingZone(d, { [`_dmarc.${d.domain}`]: { TXT: ['v=DMARC1; p=none'] } });
    await page.getByRole('button', { name: /Check now/ }).click();
    await page.getByText('Verified', { exact: true }).waitFor();
    await page.getByText(/DMARC: warn/).waitFor();
    await page.getByText(/p=none: receivers only monitor/).waitFor();
    await check(h, page, 'sending-domains-checked');

    const r = await t.a.post('/sender/save', senderForm({ from_email: 'hello@news.example.com', nickname: 'news' }));
    assert.equal(r.status, 200, r.text);
    assert.equal((await t.a.post('/sender/save', senderForm({ from_email: 'hi@elsewhere.example.org', nickname: 'other' }))).status, 200);
    await page.goto(`${h.base}/app/settings/senders`);
    await page.getByRole('heading', { level: 1, name: 'Senders' }).waitFor();
    await page.getByText('authenticated', { exact: true }).waitFor();
    await page.getByRole('link', { name: /add elsewhere\.example\.org as a sending domain/ }).waitFor();
    await check(h, page, 'senders-domain-status');
    // The one refusal asked for (the invalid name) is the only failed request.
    assert.deepEqual(problems, ['console: Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)']);
  });
});
