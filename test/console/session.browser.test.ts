/**
 * What every call of the console carries of the session (web/src/lib/session-link.ts, openapi-fetch
 * middleware), in chromium: the CSRF token on every request, GET included; one renewal of a token
 * made stale by a newer sign-in on the same cookie; a 401 back to the sign-in page with the
 * service's words; a service out of reach as readable text.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { skipWithoutChromium, startConsole, type ConsoleHarness } from './browser.js';

/** The API's requests a page makes (its own files under /app aside), with their answers. */
function apiTraffic(page: Page, base: string) {
  const seen: Array<{ method: string; path: string; token: string | undefined; status: Promise<number> }> = [];
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (!request.url().startsWith(base) || url.pathname.startsWith('/app')) return;
    seen.push({
      method: request.method(),
      path: url.pathname,
      token: request.headers()['x-csrf-token'],
      status: request.response().then((r) => r?.status() ?? 0),
    });
  });
  return seen;
}

/** Runs `fetch` in the page, outside the console's client (as another tab or program would), and answers the JSON. */
function fetchInPage(page: Page, path: string, init: { method?: string; form?: Record<string, string>; token?: string } = {}) {
  return page.evaluate(
    async ({ path, init }) => {
      const res = await fetch(path, {
        method: init.method ?? 'GET',
        headers: { Accept: 'application/json', ...(init.token ? { 'X-CSRF-Token': init.token } : {}) },
        body: init.form ? new URLSearchParams(init.form) : undefined,
      });
      return (await res.json()) as { message: { csrf_token: string } };
    },
    { path, init },
  );
}

describe('the console session in chromium', { skip: skipWithoutChromium }, () => {
  let h: ConsoleHarness;
  let base: string;

  before(async () => {
    h = await startConsole();
    base = h.base;
  });
  after(async () => {
    await h?.close();
  });

  it("sends the session's CSRF token with every call, reads included", async () => {
    const { context, page, problems } = await h.open();
    await h.signIn(page);
    const token = (await fetchInPage(page, '/session')).message.csrf_token;
    const seen = apiTraffic(page, base);
    await page.getByRole('navigation').getByRole('link', { name: 'Contacts' }).click();
    await page.getByRole('heading', { level: 1, name: 'Contacts' }).waitFor();
    await page.getByText('No contact types yet').waitFor();
    const reads = seen.filter((r) => r.method === 'GET');
    assert.ok(
      reads.some((r) => r.path === '/contacts-type'),
      seen.map((r) => r.path).join(', '),
    );
    for (const r of seen) assert.equal(r.token, token, `${r.method} ${r.path}`);
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('makes a change once more with the new token when a newer sign-in replaced the session', async () => {
    const { context, page, problems } = await h.open();
    await h.signIn(page);
    await page.getByRole('navigation').getByRole('link', { name: 'Contacts' }).click();
    await page.getByRole('heading', { level: 1, name: 'Contacts' }).waitFor();
    // A sign-in outside this tab's knowledge (the mark in localStorage does not change, so no
    // storage event): the cookie now names a new session, whose token the tab has not seen.
    const owner = await h.owner();
    const fresh = await fetchInPage(page, '/session/sign-in', { method: 'POST', form: { email: owner.email, password: owner.password } });
    const seen = apiTraffic(page, base);
    await page.getByLabel('New contact type').fill('Renewed readers');
    await page.getByRole('button', { name: 'Add contact type' }).click();
    await page.getByRole('status').getByText('Contact type “Renewed readers” added.').waitFor();

    const adds = seen.filter((r) => r.path === '/contacts-type/add');
    assert.deepEqual(await Promise.all(adds.map((r) => r.status)), [403, 200], 'refused once for the stale token, then made');
    assert.notEqual(adds[0].token, fresh.message.csrf_token);
    assert.equal(adds[1].token, fresh.message.csrf_token);
    assert.ok(
      seen.some((r) => r.method === 'GET' && r.path === '/session'),
      'the new token was read from GET /session',
    );
    const listed = (await h.t.a.get('/contacts-type')).body.message.contactTypes as Array<{ name: string }>;
    assert.deepEqual(
      listed.filter((ct) => ct.name === 'Renewed readers').map((ct) => ct.name),
      ['Renewed readers'],
    );
    assert.deepEqual(
      problems.filter((p) => !p.includes('403')),
      [],
    );
    await context.close();
  });

  it("returns to the sign-in page with the service's words when the session ended elsewhere", async () => {
    const { context, page, problems } = await h.open();
    await h.signIn(page);
    // The same person elsewhere (another browser) changes the password, which ends their other
    // sessions, then sets it back: this tab's cookie stays, its session is gone.
    const other = await h.open();
    await h.signIn(other.page);
    const token = (await fetchInPage(other.page, '/session')).message.csrf_token;
    const { password } = await h.owner();
    for (const [from, to] of [
      [password, `${password} for a moment`],
      [`${password} for a moment`, password],
    ])
      await fetchInPage(other.page, '/me/password', { method: 'POST', token, form: { current_password: from, password: to } });
    await other.context.close();

    await page.getByRole('navigation').getByRole('link', { name: 'Contacts' }).click();
    await page.getByText('Your session has ended: sign in again.').waitFor();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    assert.equal(await page.evaluate(() => localStorage.getItem('campaign.session')), null);
    assert.deepEqual(
      problems.filter((p) => !p.includes('401')),
      [],
    );
    await context.close();
  });

  it('says so in words when the service cannot be reached', async () => {
    const { context, page } = await h.open();
    await h.signIn(page);
    await page.route(`${base}/contacts-type*`, (route) => route.abort('connectionrefused'));
    await page.getByRole('navigation').getByRole('link', { name: 'Contacts' }).click();
    await page.getByRole('alert').getByText('The service cannot be reached. Check your connection and try again.').waitFor();
    await context.close();
  });
});
