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

/** The folder a file counts in: each folder of modules/ on its own, else its top folder (a file at the top is its own). */
function folderOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'modules' && parts.length > 2) return `modules/${parts[1]}`;
  return parts.length > 1 ? parts[0] : file.replace(/\.js$/, '.ts');
}

/** The folders under src/ that import each other, directly or through others: each cycle as its sorted folders. */
function folderCycles(): string[][] {
  const edges = new Map<string, Set<string>>();
  for (const file of filesUnder('.')) {
    const from = folderOf(file);
    for (const to of importsOf(file).map(folderOf)) {
      if (to === from) continue;
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from)!.add(to);
    }
  }
  // Tarjan's strongly connected components: a component of more than one folder is a cycle.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        component.push(w);
      } while (w !== v);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

describe('the floors of the code hold', () => {
  test('no folders under src/ import each other (each folder of modules/ counted on its own)', () => {
    assert.deepEqual(folderCycles(), []);
  });

  test('people and access stand below accounts', () => {
    const up = filesUnder('modules/access').flatMap((f) =>
      importsOf(f)
        .filter((i) => i.startsWith('modules/accounts/'))
        .map((i) => `${f} → ${i}`),
    );
    assert.deepEqual(up, [], 'accounts/ imports access/, never the other way');
  });

  test('nothing in db/, http/, delivery/, events/, messages/, jobs/, reference/, suppression/ or util/ imports a module', () => {
    const low = ['db', 'http', 'delivery', 'events', 'messages', 'jobs', 'reference', 'suppression', 'util'].flatMap(filesUnder);
    const up = low.flatMap((f) =>
      importsOf(f)
        .filter((i) => i.startsWith('modules/') || i === 'mail-kinds.js')
        .map((i) => `${f} → ${i}`),
    );
    assert.deepEqual(up, []);
  });

  test('the public pages and the inbound intake are given the kinds of mail, never import the list', () => {
    const out = ['public', 'inbound'].flatMap(filesUnder).flatMap((f) =>
      importsOf(f)
        .filter((i) => i === 'mail-kinds.js')
        .map((i) => `${f} → ${i}`),
    );
    assert.deepEqual(out, []);
  });

  test('one policy decides what an event does to an address: only src/suppression/ puts an address on a list', () => {
    const writes = /\b(suppressAddress|suppressAddresses|recordSoftBounce|insertUnsubscribers|insertErasedHash)\b/;
    const out = filesUnder('.').filter(
      (f) => !f.startsWith('suppression/') && !f.startsWith('db/') && writes.test(readFileSync(join(SRC, f), 'utf8')),
    );
    assert.deepEqual(out, []);
    const policy = readFileSync(join(SRC, 'suppression/suppression.policy.ts'), 'utf8');
    for (const event of ['hard_bounce', 'soft_bounce', 'complaint', 'unsubscribe', 'inactivity', 'erasure'])
      assert.match(policy, new RegExp(`\\b${event}: \\{`));
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

  test('a message has one owner: at most two files write mail_messages, both in messages/', () => {
    const write = /(insertInto|updateTable|deleteFrom)\(\s*'mail_messages'|\b(insert\s+into|update|delete\s+from)\s+mail_messages\b/i;
    const writers = filesUnder('.').filter((f) => !f.startsWith('db/migrations/') && write.test(readFileSync(join(SRC, f), 'utf8')));
    assert.ok(writers.length <= 2, writers.join(', '));
    assert.deepEqual(
      writers.filter((f) => !f.startsWith('messages/')),
      [],
    );
    // The leased queue writes the table only through the descriptor its owner declares.
    const named = filesUnder('jobs').filter((f) => readFileSync(join(SRC, f), 'utf8').includes('mail_messages'));
    assert.deepEqual(named, []);
  });

  test('the message owner, the ledger and the job files name no kind of mail', () => {
    for (const f of ['messages', 'jobs'].flatMap(filesUnder)) {
      const text = readFileSync(join(SRC, f), 'utf8');
      assert.doesNotMatch(text, /'(system|single_send|automation)'|single_sends|automations\b/, f);
    }
  });

  test('leases are claimed in one place: only the leased queue (src/jobs/queue/) skips locked rows', () => {
    const claiming = filesUnder('.').filter(
      (f) => !f.startsWith('db/') && /lockSkippingLocked|skip locked/i.test(readFileSync(join(SRC, f), 'utf8')),
    );
    assert.deepEqual(claiming, ['jobs/queue/claim.ts']);
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
