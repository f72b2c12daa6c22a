/**
 * The harness of the console's browser tests: the app on a real port with the console built from
 * web/, Debian's chromium driven by playwright-core, and the checks every page gets (no CSP
 * violation, no script error, no dialog; axe-core; a screenshot in test-results/console/, which is
 * not committed and which CI keeps as an artifact).
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { Client, setup, type SetupOptions, type TestContext } from '../helpers.js';
import { keyLookup } from '../../src/modules/access/keys.queries.js';
import { inviteFirstOwner } from '../../src/modules/access/users.service.js';
import { builtConsole } from './console-build.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(import.meta.dirname, '..', '..', 'test-results', 'console');
const AXE = readFileSync(join(import.meta.dirname, '..', '..', 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

/** `describe`'s skip option: the reason when chromium is missing (`.ci/run` installs it), else false. */
export const skipWithoutChromium: string | false = existsSync(CHROMIUM)
  ? false
  : `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium) to run the browser test`;

/** The password of the owners the harness makes. */
export const OWNER_PASSWORD = 'the console owner password';

/** An account's keys (the account found by its public key when `user_id` is not given). */
export type AccountKeys = { public_key: string; secret_key: string; user_id?: number };

/** A person who signs in to the console. */
export interface Owner {
  id: number;
  email: string;
  password: string;
}

export interface Opened {
  context: BrowserContext;
  page: Page;
  /** What must never happen: CSP violations and other console errors, script errors, dialogs (an XSS that ran). */
  problems: string[];
}

export interface ConsoleHarness {
  t: TestContext;
  /** The app's origin, e.g. http://127.0.0.1:41234. */
  base: string;
  browser: Browser;
  /** The folder the console was built into. */
  dir: string;
  open(options?: Parameters<Browser['newContext']>[0]): Promise<Opened>;
  /**
   * Signs in as the owner of the account of `keys` (account a by default), by email and password
   * on the sign-in page, and waits for the overview. The owner is made at the first call (see `owner`).
   */
  signIn(page: Page, keys?: AccountKeys): Promise<void>;
  /** The owner of the account of `keys` (account a by default): made once, as the first start makes one, then reused. */
  owner(keys?: AccountKeys): Promise<Owner>;
  /** Fills the sign-in page with an email and a password and presses Sign in (waits for nothing). */
  fillSignIn(page: Page, email: string, password: string): Promise<void>;
  /** axe-core's serious and critical violations on the page, as readable lines. */
  axeViolations(page: Page): Promise<string[]>;
  /** A full-page screenshot as test-results/console/<name>.png. */
  shot(page: Page, name: string): Promise<void>;
  close(): Promise<void>;
}

/** Drops a file made of `text` on the element `selector`, as a person dragging it from the desktop does. */
export async function dropFile(page: Page, selector: string, name: string, text: string): Promise<void> {
  const dataTransfer = await page.evaluateHandle(
    ([fileName, content]) => {
      const dt = new DataTransfer();
      dt.items.add(new File([content], fileName, { type: 'text/csv' }));
      return dt;
    },
    [name, text] as const,
  );
  await page.dispatchEvent(selector, 'dragenter', { dataTransfer });
  await page.dispatchEvent(selector, 'dragover', { dataTransfer });
  await page.dispatchEvent(selector, 'drop', { dataTransfer });
}

/** Starts the app (with `setup`'s configuration and options: a test clock, an SMTP sink …) and chromium. */
export async function startConsole(options: Parameters<typeof setup>[0] = {}, setupOptions: SetupOptions = {}): Promise<ConsoleHarness> {
  const build = await builtConsole();
  const t = await setup({ ...options, consoleDir: build.dir }, setupOptions);
  const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  mkdirSync(SHOTS, { recursive: true });

  async function open(contextOptions: Parameters<Browser['newContext']>[0] = {}): Promise<Opened> {
    const context = await browser.newContext(contextOptions);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('dialog', (d) => {
      problems.push(`dialog: ${d.message()}`);
      void d.dismiss();
    });
    return { context, page, problems };
  }

  // Each account's owner, made once: the one-time link of the service's first-owner invitation,
  // accepted through the public route as a person does in the browser.
  const owners = new Map<string, Promise<Owner>>();
  function owner(keys: AccountKeys = t.a.keys!): Promise<Owner> {
    let made = owners.get(keys.public_key);
    if (!made) {
      made = (async () => {
        const userId = keys.user_id ?? (await keyLookup(t.database).find(keys.public_key))?.user_id;
        if (!userId) throw new Error(`no account has the public key ${keys.public_key}`);
        const email = `owner@account-${userId}.example.com`;
        const link = await inviteFirstOwner(t.database.db, t.config, userId, email, t.clock.now());
        const token = link.slice(link.lastIndexOf('/') + 1);
        const accepted = await t.anon.post('/session/accept-invite', {
          token,
          name: `Owner of account ${userId}`,
          password: OWNER_PASSWORD,
        });
        if (accepted.status !== 200) throw new Error(`accepting the owner's invitation: ${accepted.text}`);
        const listed = await new Client(t.app, { user_id: userId, public_key: keys.public_key, secret_key: keys.secret_key }).get('/users');
        const id = (listed.body.message.users as Array<{ id: number; email: string }>).find((u) => u.email === email)!.id;
        return { id, email, password: OWNER_PASSWORD };
      })();
      owners.set(keys.public_key, made);
    }
    return made;
  }

  async function fillSignIn(page: Page, email: string, password: string) {
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  async function signIn(page: Page, keys: AccountKeys = t.a.keys!) {
    const { email, password } = await owner(keys);
    await page.goto(`${base}/app`);
    await fillSignIn(page, email, password);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  }

  async function axeViolations(page: Page): Promise<string[]> {
    // Evaluated through the DevTools protocol, which the page's CSP does not govern (a script tag would be refused).
    await page.evaluate(AXE);
    const results = await page.evaluate(() =>
      (
        window as unknown as {
          axe: { run(): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }> };
        }
      ).axe.run(),
    );
    return results.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  }

  const shot = async (page: Page, name: string) => {
    await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  };

  return {
    t,
    base,
    browser,
    dir: build.dir,
    open,
    signIn,
    owner,
    fillSignIn,
    axeViolations,
    shot,
    async close() {
      await browser.close();
      await t.close();
      build.remove();
    },
  };
}
