/**
 * The built console for the browser tests: dist/console when it is newer than every file of web/
 * (`npm run build` made it), else a fresh build into a temporary folder (a few seconds), so a test
 * never runs against stale pages and never writes into dist/ while another test reads it.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'vite';

const ROOT = join(import.meta.dirname, '..', '..');
const WEB = join(ROOT, 'web');
const BUILT = join(ROOT, 'dist', 'console');

function mtime(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

/** The newest modification time under `dir` (folders too: a deleted file touches its folder). */
function newest(dir: string): number {
  let max = mtime(dir);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    max = Math.max(max, entry.isDirectory() ? newest(path) : mtime(path));
  }
  return max;
}

/** A folder holding the console built from the current web/ sources; `remove()` deletes it if it was built for the test. */
export async function builtConsole(): Promise<{ dir: string; remove(): void }> {
  if (mtime(join(BUILT, 'index.html')) > newest(WEB)) return { dir: BUILT, remove: () => {} };
  const dir = mkdtempSync(join(tmpdir(), 'console-'));
  await build({ configFile: join(WEB, 'vite.config.ts'), logLevel: 'warn', build: { outDir: dir, emptyOutDir: true } });
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
