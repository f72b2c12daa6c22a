/**
 * The console's API types come from the service's OpenAPI document (scripts/openapi-types.ts), so a
 * change of a route or of an answer's schema fails the console's type check (svelte-check, as
 * `npm run typecheck` runs it) instead of a page at run time. Checked on a copy of web/ whose types
 * are generated from the document with one route renamed and one answer's field renamed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serviceDocument, typesOf } from '../../scripts/openapi-types.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** Runs svelte-check over the console in `root` (a copy of the project's web/ beside node_modules); answers its errors. */
function svelteCheck(root: string): { status: number | null; errors: string[] } {
  const r = spawnSync(
    process.execPath,
    [
      join(ROOT, 'node_modules', 'svelte-check', 'bin', 'svelte-check'),
      '--tsconfig',
      join(root, 'web', 'tsconfig.json'),
      '--output',
      'machine',
    ],
    { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  return { status: r.status, errors: r.stdout.split('\n').filter((line) => / ERROR /.test(line)) };
}

describe("the console's API types", () => {
  let root: string;
  let doc: Awaited<ReturnType<typeof serviceDocument>>;

  before(async () => {
    doc = await serviceDocument();
    root = mkdtempSync(join(tmpdir(), 'console-types-'));
    cpSync(join(ROOT, 'web'), join(root, 'web'), { recursive: true, filter: (src) => !src.endsWith('api.gen.d.ts') });
    symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
  });
  after(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('are generated for every path of the document, with its answers', async () => {
    const text = await typesOf(doc);
    for (const path of Object.keys(doc.paths ?? {})) assert.ok(text.includes(`"${path}": {`), path);
    assert.match(text, /contactTypes: \{\n\s+id: number;/);
  });

  it('fail the type check when a route the console calls is renamed or an answer it reads changes', { timeout: 600_000 }, async () => {
    const paths = doc.paths as Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: any }> }> }>>;
    const changed = structuredClone(paths);
    // A route renamed: the console asks GET /contacts-type on several pages.
    changed['/contact-types'] = changed['/contacts-type'];
    delete changed['/contacts-type'];
    // A field of an answer renamed: the senders' `is_verified`, which the composer and the Senders page read.
    const sender = changed['/senders'].get.responses['200'].content!['application/json'].schema.properties.message.properties.senders.items;
    sender.properties.verified = sender.properties.is_verified;
    delete sender.properties.is_verified;
    sender.required = (sender.required as string[]).map((f) => (f === 'is_verified' ? 'verified' : f));
    writeFileSync(join(root, 'web', 'src', 'lib', 'api.gen.d.ts'), await typesOf({ ...doc, paths: changed }));

    const { status, errors } = svelteCheck(root);
    assert.notEqual(status, 0);
    const about = (file: string, text: string) => errors.some((e) => e.includes(file) && e.includes(text));
    assert.ok(about('web/src/lib/types.ts', '/contacts-type'), errors.join('\n'));
    assert.ok(about('web/src/pages/ContactTypes.svelte', '/contacts-type'), errors.join('\n'));
    assert.ok(about('web/src/pages/settings/Senders.svelte', 'is_verified'), errors.join('\n'));
    assert.ok(about('web/src/pages/single-sends/AudienceStep.svelte', 'is_verified'), errors.join('\n'));
  });
});
