/** What the single-send browser tests share: clicking a control of the composer, and checking that the page fits its screen. */
import assert from 'node:assert/strict';
import type { Locator, Page } from 'playwright-core';

/**
 * Clicks a control once it is scrolled into view: clicked from afar, the click sometimes lands on
 * the design preview's frame while the page scrolls.
 */
export async function press(control: Locator): Promise<void> {
  await control.scrollIntoViewIfNeeded();
  await control.click();
}

/** No page scrolls sideways, and `controls` lie wholly inside the screen. */
export async function fits(page: Page, controls: Locator[]): Promise<void> {
  const w = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
  assert.ok(w.scroll <= w.client, `wider than the screen: ${w.scroll} > ${w.client}`);
  for (const c of controls) {
    await c.scrollIntoViewIfNeeded();
    const box = (await c.boundingBox())!;
    assert.ok(box.x >= 0 && box.x + box.width <= w.client, `${await c.textContent()} is cut off: ${JSON.stringify(box)}`);
  }
}
