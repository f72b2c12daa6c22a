// Runs before `npm start` and the CLI scripts: rebuilds dist/ (and the console, dist/console) when a
// source file is newer than the last build, so edited code never runs stale, while an up-to-date
// start costs a directory walk (tens of milliseconds) instead of a compile (several seconds). Plain JavaScript: it runs before
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

/** Runs a tool of node_modules with plain node; its output goes to stderr. Exits on failure. */
function run(args) {
  const r = spawnSync(process.execPath, args, { cwd: root, stdio: ['ignore', process.stderr, process.stderr] });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const sources = Math.max(newest(join(root, 'src')), mtime(join(root, 'tsconfig.json')), mtime(join(root, 'tsconfig.build.json')));
if (sources > built) {
  process.stderr.write('Sources changed since the last build: compiling (npm run build)…\n');
  run([join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json')]);
}
// The console (web/ → dist/console), served at /app: rebuilt when its sources are newer than its page.
if (newest(join(root, 'web')) > mtime(join(root, 'dist', 'console', 'index.html'))) {
  process.stderr.write('Console sources changed since the last build: building it (vite build)…\n');
  run([
    join(root, 'node_modules', 'vite', 'bin', 'vite.js'),
    'build',
    '--config',
    join(root, 'web', 'vite.config.ts'),
    '--logLevel',
    'warn',
  ]);
}
