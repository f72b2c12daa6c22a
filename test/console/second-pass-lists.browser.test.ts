/**
 * Every list of the console at 1280 px and at 390 px (see browser.ts for the harness): no word of
 * a cell broken mid-word, no column or action clipped or off the screen, with a row's inline
 * confirmation open too; axe on each page, and a screenshot of each in test-results/console/.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startJobs } from '../../src/lanes.js';
import { Receiver } from '../modules/webhooks.helpers.js';
import { skipWithoutChromium, startConsole, type ConsoleHarness } from './browser.js';
import { seedAccount, type Seeded } from './second-pass.seed.js';
import { listLoaded, tableProblems, WIDTHS } from './second-pass.layout.js';

describe('every list of the console fits a laptop and a phone', { skip: skipWithoutChromium }, () => {
  let h: ConsoleHarness;
  let receiver: Receiver;
  let seeded: Seeded;

  before(async () => {
    h = await startConsole({ webhooksAllowPrivate: true });
    receiver = await Receiver.start();
    seeded = await seedAccount(h.t, receiver.url('/campaign/events'));
    // One event delivered, so the deliveries log has a row.
    assert.equal((await h.t.a.post('/global-unsubscribes/save', { email_address: 'left.today@example.com' })).status, 200);
    const worker = startJobs(h.t.app.deps, { lanes: ['webhooks'], loop: false });
    for (let n = await worker.tick(); n > 0; n = await worker.tick());
    await worker.stop();
  });
  after(async () => {
    await receiver?.close();
    await h?.close();
  });

  /**
   * Every page holding a list of records: its path below /app, a short name for the screenshot,
   * and whether its rows' delete (or remove) asks first, inline (then the test opens one).
   */
  const pages = (): Array<[path: string, name: string, confirms: boolean]> => [
    ['/contacts', 'contacts', false],
    ['/segments', 'segments', false],
    [`/segments/${seeded.segmentId}`, 'segment-members', false],
    ['/designs', 'designs', true],
    ['/single-sends', 'single-sends', true],
    ['/automations', 'automations', true],
    [`/automations/${seeded.automationUtr}`, 'automation-emails', true],
    ['/settings/senders', 'senders', true],
    ['/settings/groups', 'groups', true],
    [`/settings/groups/${seeded.groupId}`, 'group-recipients', true],
    ['/settings/unsubscribes', 'global-unsubscribes', true],
    ['/settings/suppressions', 'suppressions', true],
    ['/settings/notifications', 'notifications', true],
    ['/settings/webhooks', 'webhooks', true],
    [`/settings/webhooks/${seeded.endpointId}`, 'webhook-deliveries', false],
  ];

  /** Opens the first row's inline delete confirmation, when the list has one (its buttons are wider). */
  async function openConfirmation(page: Page): Promise<boolean> {
    const ask = page
      .locator('main tbody')
      .getByRole('button', { name: /^(Delete|Remove|Lift)\b/ })
      .first();
    if (!(await ask.count())) return false;
    await ask.click();
    await page
      .locator('main tbody')
      .getByRole('button', { name: /^(Yes|Delete (for good|this))/ })
      .first()
      .waitFor();
    return true;
  }

  for (const size of WIDTHS) {
    it(`lays out every list at ${size.width} px without a broken word or a clipped action`, async () => {
      const { context, page, problems } = await h.open({ viewport: { width: size.width, height: size.height } });
      await h.signIn(page);
      const found: string[] = [];
      for (const [path, name, confirms] of pages()) {
        await page.goto(`${h.base}/app${path}`);
        await listLoaded(page).catch((e: Error) => assert.fail(`${path}: ${e.message}`));
        for (const p of await tableProblems(page)) found.push(`${path}: ${p}`);
        for (const alert of await page.getByRole('alert').allInnerTexts()) found.push(`${path}: alert ${alert}`);
        await h.shot(page, `second-pass-${name}-${size.width}`);
        assert.deepEqual(await h.axeViolations(page), [], path);
        if (confirms && (await openConfirmation(page))) {
          for (const p of await tableProblems(page)) found.push(`${path}, confirming: ${p}`);
          await h.shot(page, `second-pass-${name}-confirm-${size.width}`);
        }
      }
      assert.deepEqual(found, []);
      assert.deepEqual(problems, []);
      await context.close();
    });
  }
});
