/**
 * `npm run bench:console`: the console's contacts page on an account of 1,000,000 contacts, timed
 * in the browser (Debian's chromium through playwright-core): from the start of the navigation to
 * /app/contacts until the first row of the table is on the page, and from a search's click until
 * its first matching row is. Median of BENCH_RUNS runs (5) per engine, after one warm-up run.
 * Reported against the budget (first page under 1 s), not asserted. The console must be
 * built (`npm run build`). Knobs (env): BENCH_CONTACTS (1000000), BENCH_RUNS (5), BENCH_ENGINES.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { benchDatabase, pgReachable, seedAccount, seedContacts, type Engine } from './lib/db.js';
import { fmt, median, timed } from './lib/measure.js';

const N = Number(process.env.BENCH_CONTACTS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',') as Engine[];
const CONSOLE = join(import.meta.dirname, '..', 'dist', 'console');
const BUDGET_MS = 1000;

/** Milliseconds from navigation start to the first table row, read from the page's own clock. */
async function firstPageMs(page: Page, base: string): Promise<number> {
  await page.goto(`${base}/app/contacts`, { waitUntil: 'commit' });
  const handle = await page.waitForFunction(() => document.querySelector('tbody td a') && performance.now(), undefined, { polling: 'raf' });
  return (await handle.jsonValue()) as number;
}

/** Milliseconds from a search's click to its first matching row, on the page's clock. */
async function searchMs(page: Page, prefix: string): Promise<number> {
  await page.getByLabel('Search by email').fill(prefix);
  const start = await page.evaluate(() => performance.now());
  await page.getByRole('button', { name: 'Search' }).click();
  const handle = await page.waitForFunction(
    (p) => [...document.querySelectorAll('tbody tr td:nth-child(2)')].some((td) => td.textContent?.startsWith(p)) && performance.now(),
    prefix,
    { polling: 'raf' },
  );
  return ((await handle.jsonValue()) as number) - start;
}

async function benchEngine(engine: Engine): Promise<void> {
  const bench = await benchDatabase(engine);
  try {
    const keys = await seedAccount(bench.db);
    const seeded = await timed(() => seedContacts(bench.db, keys.user_id, N));
    console.log(`${engine}: seeded ${fmt(N)} contacts in ${fmt(seeded.ms / 1000, 1)} s`);
    const config = loadConfig({ RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'silent' }, { appSecret: 'bench', consoleDir: CONSOLE });
    const app = await buildApp({ config, database: bench.database, logger: false });
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
    try {
      const page = await browser.newPage();
      await page.goto(`${base}/app`);
      await page.getByLabel('Public key').fill(keys.public_key);
      await page.getByLabel('Secret key').fill(keys.secret_key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      const pages: number[] = [];
      const searches: number[] = [];
      for (let run = 0; run <= RUNS; run++) {
        const first = await firstPageMs(page, base);
        // Different prefixes each run, so no answer is a repeat of the last.
        const search = await searchMs(page, `contact${run + 4}${run}`);
        if (run > 0) {
          pages.push(first);
          searches.push(search);
        }
      }
      const verdict = (ms: number) => (ms < BUDGET_MS ? 'within' : 'OVER');
      console.log(
        `${engine}: contacts page, first rows shown: median ${fmt(median(pages))} ms (runs ${pages.map((x) => fmt(x)).join(', ')}) — ${verdict(median(pages))} the 1 s budget`,
      );
      console.log(
        `${engine}: search by email prefix, first rows shown: median ${fmt(median(searches))} ms (runs ${searches.map((x) => fmt(x)).join(', ')})`,
      );
    } finally {
      await browser.close();
      await app.close();
    }
  } finally {
    await bench.drop();
  }
}

if (!existsSync(join(CONSOLE, 'index.html'))) {
  console.error('The console is not built: run `npm run build` first.');
  process.exit(1);
}
for (const engine of ENGINES) {
  if (engine === 'postgres' && !(await pgReachable())) {
    console.log('postgres: not reachable, skipped');
    continue;
  }
  await benchEngine(engine);
}
