import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';

const SRC = join(import.meta.dirname, '..', 'src');

/** Every TypeScript file under `dir`, relative to src/. */
function filesUnder(dir: string): string[] {
  return readdirSync(join(SRC, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f));
}

/** The src/-relative paths a file imports (static and dynamic imports of relative paths). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(SRC, file), 'utf8');
  return [...text.matchAll(/(?:from\s+|import\(\s*)'(\.[^']+)'/g)].map((m) => relative(SRC, join(SRC, file, '..', m[1])));
}

describe('the floors of the code hold', () => {
  test('nothing in db/, http/, delivery/, events/, queue/, ledger/, jobs/, reference/, suppression/ or util/ imports a module', () => {
    const low = ['db', 'http', 'delivery', 'events', 'queue', 'ledger', 'jobs', 'reference', 'suppression', 'util'].flatMap(filesUnder);
    const up = low.flatMap((f) =>
      importsOf(f)
        .filter((i) => i.startsWith('modules/') || i === 'mail-kinds.js')
        .map((i) => `${f} → ${i}`),
    );
    assert.deepEqual(up, []);
  });

  test('suppression/ stands on db/, util/, events/ and http/errors only', () => {
    const allowed = (i: string) => /^(db|util|events|suppression)\//.test(i) || i === 'http/errors.js';
    const out = filesUnder('suppression').flatMap((f) =>
      importsOf(f)
        .filter((i) => !allowed(i))
        .map((i) => `${f} → ${i}`),
    );
    assert.deepEqual(out, []);
  });

  test('the generic queue, ledger and job files name no kind of mail', () => {
    for (const f of ['queue', 'ledger', 'jobs'].flatMap(filesUnder)) {
      const text = readFileSync(join(SRC, f), 'utf8');
      assert.doesNotMatch(text, /'(system|single_send|automation)'|single_sends|automations\b/, f);
    }
  });

  test('segments, single sends and automations depend one way: automations on both, single sends on segments', () => {
    const refused: Record<string, string[]> = {
      'modules/segments': ['modules/automations/', 'modules/single-sends/'],
      'modules/single-sends': ['modules/automations/'],
    };
    const out = Object.entries(refused).flatMap(([dir, above]) =>
      filesUnder(dir).flatMap((f) =>
        importsOf(f)
          .filter((i) => above.some((a) => i.startsWith(a)))
          .map((i) => `${f} → ${i}`),
      ),
    );
    assert.deepEqual(out, []);
  });
});
