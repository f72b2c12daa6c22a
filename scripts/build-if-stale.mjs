// Runs before `npm start` and the CLI scripts: rebuilds dist/ when a source file is newer than the
// last build, so edited code never runs stale, while an up-to-date start costs a directory walk
// (tens of milliseconds) instead of a compile (several seconds). Plain JavaScript: it runs before
// anything is compiled. tsc's output goes to stderr, keeping stdout for the command's own output.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
/** dist/main.js is rewritten by every build (tsc writes every output), so its time is the build's. */
const built = mtime(join(root, 'dist', 'main.js'));

function mtime(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

/** The newest modification time under `dir` (files and folders: a deleted file touches its folder). */
function newest(dir) {
  let max = mtime(dir);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    max = Math.max(max, entry.isDirectory() ? newest(path) : mtime(path));
  }
  return max;
}

const sources = Math.max(newest(join(root, 'src')), mtime(join(root, 'tsconfig.json')), mtime(join(root, 'tsconfig.build.json')));
if (sources > built) {
  process.stderr.write('Sources changed since the last build: compiling (npm run build)…\n');
  const tsc = spawnSync(
    process.execPath,
    [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json')],
    {
      cwd: root,
      stdio: ['ignore', process.stderr, process.stderr],
    },
  );
  process.exit(tsc.status ?? 1);
}
