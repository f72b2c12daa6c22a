/**
 * Layout checks run in the page: what a reader would see as broken. Each returns readable lines,
 * empty when all is well.
 */
import type { Page } from 'playwright-core';

/** The two widths every list is checked at: a laptop and a phone. */
export const WIDTHS = [
  { name: 'desktop', width: 1280, height: 900 },
  { name: 'phone', width: 390, height: 844 },
] as const;

/**
 * The tables of the page (inside `main`): no word of a cell broken across two lines, no table
 * wider than its box (a clipped column), no action (button or link in a row) outside the screen,
 * outside its table's box or cut inside itself; and the page itself no wider than the screen.
 */
export function tableProblems(page: Page): Promise<string[]> {
  return page.evaluate(TABLE_PROBLEMS) as Promise<string[]>;
}

// Plain JavaScript, evaluated in the page as it is written (the test's compiler would add helpers the page lacks).
const TABLE_PROBLEMS = `(() => {
  const problems = [];
  const vw = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > vw + 1)
    problems.push('the page scrolls sideways: ' + document.documentElement.scrollWidth + ' > ' + vw);
  const short = (el) => (el.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 60);
  for (const table of document.querySelectorAll('main table')) {
    const box = table.closest('.table-wrap') || table.parentElement;
    if (box.scrollWidth > box.clientWidth + 1)
      problems.push('a table is wider than its box (' + box.scrollWidth + ' > ' + box.clientWidth + '): ' + short(table.querySelector('tr')));
    const boxRect = box.getBoundingClientRect();
    for (const action of table.querySelectorAll('tbody button, tbody a, tbody .button')) {
      const r = action.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      const name = short(action);
      if (r.left < -1 || r.right > vw + 1) problems.push('“' + name + '” is off the screen (' + Math.round(r.left) + '–' + Math.round(r.right) + ' of ' + vw + ')');
      if (r.left < boxRect.left - 1 || r.right > boxRect.right + 1) problems.push('“' + name + '” is cut by its table’s box');
      if (action.tagName === 'BUTTON' && action.scrollWidth > action.clientWidth + 1) problems.push('“' + name + '” is cut inside its button');
    }
    // Each word of each cell on one line only: a word whose letters sit on two lines is broken.
    const walker = document.createTreeWalker(table, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const parent = node.parentElement;
      // Text a reader cannot see: hidden for screen readers only, or a phone's folded-away header row.
      const head = parent.closest('thead');
      if (parent.closest('.visually-hidden, caption') || !parent.closest('td, th') || (head && head.getBoundingClientRect().width <= 1)) continue;
      for (const m of (node.textContent || '').matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const tops = new Set([...range.getClientRects()].filter((q) => q.width > 0).map((q) => Math.round(q.top)));
        if (tops.size > 1) problems.push('“' + m[0] + '” is broken across lines');
      }
    }
  }
  return problems;
})()`;

/** Waits until the page's lists have loaded (nothing marked busy, a first row shown). */
export async function listLoaded(page: Page): Promise<void> {
  await page.locator('main tbody tr').first().waitFor();
  await page.waitForFunction(() => !document.querySelector('main [aria-busy="true"]'));
}
