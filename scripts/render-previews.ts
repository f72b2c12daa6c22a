/**
 * One-off: renders each shipped template with sample values and screenshots it with headless
 * Chromium into assets/templates/<slug>.png (the `preview_image` files). Not run by tests or CI;
 * run it again after changing a template:
 *
 *   apt-get install -y chromium        # Debian's package
 *   npx tsx scripts/render-previews.ts [slug…]
 *
 * Chromium runs offline (no network flags) and the designs use no remote images or fonts, so the
 * screenshot is exactly what the HTML draws. Set CHROMIUM to use another binary.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileDesign, renderFor } from '../src/delivery/render.js';
import { CATALOG, previewImageOf, TEMPLATE_ASSETS_DIR } from '../src/delivery/designs.js';

const WIDTH = 600;
const HEIGHT = 900;
const MAX_BYTES = 200 * 1024;

/** What a reader of the preview sees in place of the placeholders. */
const SAMPLE: Record<string, string> = {
  first_name: 'Alex',
  last_name: 'Morgan',
  full_name: 'Alex Morgan',
  email: 'alex.morgan@example.com',
  address_line1: '42 Harbour Street',
  city: 'Portsmouth',
  postal_code: 'PO1 3AX',
  country: 'United Kingdom',
  sender_name: 'Northwind',
  sender_address: '500 Market Street, San Francisco, California 94105, United States',
  unsubscribe_preferences: '#',
};

const only = new Set(process.argv.slice(2));
const chromium = process.env.CHROMIUM ?? 'chromium';
const work = mkdtempSync(join(tmpdir(), 'previews-'));
try {
  for (const entry of CATALOG) {
    if (only.size && !only.has(entry.slug)) continue;
    const compiled = await compileDesign({ design: { templateId: entry.id }, subject: entry.template_name, footer: false });
    const page = join(work, `${entry.slug}.html`);
    writeFileSync(page, renderFor(compiled, SAMPLE).html);
    const out = join(TEMPLATE_ASSETS_DIR, previewImageOf(entry));
    execFileSync(
      chromium,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--hide-scrollbars',
        `--user-data-dir=${mkdtempSync(join(work, 'profile-'))}`,
        `--screenshot=${out}`,
        `--window-size=${WIDTH},${HEIGHT}`,
        `file://${page}`,
      ],
      { stdio: 'ignore', timeout: 60_000 },
    );
    const size = statSync(out).size;
    console.log(`${previewImageOf(entry)}: ${Math.round(size / 1024)} KB${size > MAX_BYTES ? ' (over 200 KB!)' : ''}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
