/**
 * `npm run bench:segments`: a segment with three conditions over 100,000 contacts (one contact
 * type): the time to create it (its full membership computed, through the segments service) and
 * the time to absorb a CSV import of 10,000 more contacts (through the CSV import service), beside
 * a baseline measured in the same run: the same filter as one plain SQL `SELECT count(*)`.
 * Target: create ≤ 3× the baseline. Medians of BENCH_RUNS runs; each run starts from the same
 * state (the segment and the imported contacts are removed after it). See bench/README.md.
 * Knobs (env): BENCH_CONTACTS (100000), BENCH_IMPORT (10000), BENCH_RUNS (3), BENCH_ENGINES.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { AppDeps } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import type { Transport } from '../src/delivery/transport.js';
import { importContactsCsv } from '../src/modules/contacts/contacts.csv.service.js';
import { syncSegmentMembership } from '../src/modules/segments/segments.membership.js';
import { createSegment } from '../src/modules/segments/segments.service.js';
import { benchDatabase, pgReachable, seedAccount, seedContacts, type BenchDatabase, type Engine } from './lib/db.js';
import { fmt, median, timed } from './lib/measure.js';

const N = Number(process.env.BENCH_CONTACTS ?? 100_000);
const IMPORT = Number(process.env.BENCH_IMPORT ?? 10_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',') as Engine[];
const TARGET = 3; // create ≤ 3× the plain count (the issue's target)
const IMPORT_DOMAIN = 'import.bench.example.com';

/**
 * The segment: about 29% of the seeded contacts (bench/lib seeds `age` 20–69 on every third
 * contact, countries in turn, cities `City 0`…`City 99`): a number in the JSON custom values, the
 * country column through its name, and a case-insensitive LIKE on a text column.
 */
const SEGMENT = {
  segment_name: 'Bench segment',
  select_field: ['age', 'country', 'city'],
  select_operator: ['greater than', 'is not', 'contains'],
  value: ['25', 'Canada', 'ITY'],
  query_type: 'and' as const,
};

/** The same filter written by hand, as one plain SQL count: the baseline. */
function baselineCount(b: BenchDatabase, userId: number, typeId: number): Promise<number> {
  const age = b.engine === 'postgres' ? sql`(custom_field::jsonb ->> 'age')::numeric` : sql`cast(json_extract(custom_field, '$.age') as real)`;
  return sql<{ n: number }>`select count(*) as n from contacts
    where user_id = ${userId} and contact_type_id = ${typeId} and deleted_at is null
      and ${age} > 25 and country <> '39' and lower(city) like '%ity%'`
    .execute(b.db)
    .then((r) => Number(r.rows[0].n));
}

/** A CSV of `n` new contacts shaped like the seeded ones. */
function writeImportCsv(dir: string, n: number): string {
  const countries = ['101', '231', '82', '75', '14', '39'];
  const lines = ['first_name,last_name,email,country,city,company_name,age'];
  for (let i = 0; i < n; i++) {
    const j = N + i;
    const custom = j % 3 === 0 ? [`Company ${j % 50}`, String(20 + (j % 50))] : ['', ''];
    lines.push([`First${j}`, `Last${j}`, `contact${j}@${IMPORT_DOMAIN}`, countries[j % 6], `City ${j % 100}`, ...custom].join(','));
  }
  const path = join(dir, 'import.csv');
  writeFileSync(path, lines.join('\n') + '\n');
  return path;
}

const nullTransport: Transport = {
  send: async () => ({ messageId: 'bench', response: 'dropped' }),
  verify: async () => undefined,
  close: async () => undefined,
};

/** Removes what a run added: its segment (with members) and the imported contacts. */
async function reset(b: BenchDatabase, userId: number): Promise<void> {
  await b.db.deleteFrom('segment_recipients').where('user_id', '=', userId).execute();
  await b.db.deleteFrom('segments').where('user_id', '=', userId).execute();
  await b.db.deleteFrom('contacts').where('user_id', '=', userId).where('email', 'like', `%@${IMPORT_DOMAIN}`).execute();
}

/** PostgreSQL only, for context: the baseline without the parallel workers PostgreSQL gives a count (an INSERT … SELECT never gets them). */
async function serialBaseline(b: BenchDatabase, userId: number, typeId: number): Promise<number> {
  return (
    await timed(() =>
      b.db.transaction().execute(async (trx) => {
        await sql`set local max_parallel_workers_per_gather = 0`.execute(trx);
        return baselineCount({ ...b, db: trx }, userId, typeId);
      }),
    )
  ).ms;
}

interface Run {
  serial: number;
  baseline: number;
  create: number;
  importWith: number;
  importWithout: number;
  sync: number;
}

async function benchEngine(engine: Engine): Promise<void> {
  const b = await benchDatabase(engine);
  const dir = mkdtempSync(join(tmpdir(), 'campaign-bench-seg-'));
  try {
    const account = await seedAccount(b.db);
    const userId = account.user_id;
    const seeded = await timed(() => seedContacts(b.db, userId, N, { types: 1 }));
    const typeId = seeded.result.typeIds[0];
    await sql`analyze`.execute(b.db);
    const csv = writeImportCsv(dir, IMPORT);
    const deps = {
      config: loadConfig({ DATA_DIR: dir, RATE_LIMIT_PER_MINUTE: '0' }, { appSecret: 'bench' }),
      database: b.database,
      transport: nullTransport,
      log: { info() {}, warn() {}, error() {}, debug() {}, trace() {}, fatal() {}, child: () => deps.log } as unknown as AppDeps['log'],
    } as AppDeps;
    const upload = { contactTypeId: String(typeId), file: { name: 'import.csv', path: csv, isFile: true } };
    console.log(`\n${engine}: ${fmt(N)} contacts seeded in ${fmt(seeded.ms)} ms; segment: ${SEGMENT.select_field.map((f, i) => `${f} ${SEGMENT.select_operator[i]} ${SEGMENT.value[i]}`).join(' and ')}`);

    // One untimed import and reset first, so every timed import starts from the same state.
    await importContactsCsv(deps, userId, upload);
    await reset(b, userId);
    const runs: Run[] = [];
    for (let run = 0; run < RUNS; run++) {
      // The baseline three times right before the create (median), so drift hits both alike.
      const counts = [await timed(() => baselineCount(b, userId, typeId)), await timed(() => baselineCount(b, userId, typeId)), await timed(() => baselineCount(b, userId, typeId))];
      const base = { ms: median(counts.map((c) => c.ms)), result: counts[0].result };
      const serial = engine === 'postgres' ? median([await serialBaseline(b, userId, typeId), await serialBaseline(b, userId, typeId), await serialBaseline(b, userId, typeId)]) : base.ms;
      const created = await timed(() => createSegment(b.db, userId, { ...SEGMENT, contact_type_id: typeId }, {}));
      const members = await memberCount(b, created.result);
      if (members !== base.result) throw new Error(`segment has ${members} members, the plain count says ${base.result}`);

      const withSeg = await timed(() => importContactsCsv(deps, userId, upload));
      const after = await baselineCount(b, userId, typeId);
      const membersAfter = await memberCount(b, created.result);
      if (withSeg.result.created !== IMPORT || membersAfter !== after) {
        throw new Error(`import: ${withSeg.result.created} created; ${membersAfter} members, the plain count says ${after}`);
      }
      // The recompute alone, once more with nothing left to change (what an import pays for each segment).
      const sync = await timed(() => b.db.transaction().execute((trx) => syncSegmentMembership(trx, userId, { contactTypeId: typeId })));
      await reset(b, userId);
      const without = await timed(() => importContactsCsv(deps, userId, upload));
      await reset(b, userId);
      runs.push({ serial, baseline: base.ms, create: created.ms, importWith: withSeg.ms, importWithout: without.ms, sync: sync.ms });
      console.log(
        `  run ${run + 1}: baseline ${fmt(base.ms, 1)} ms (${fmt(base.result)} match), create ${fmt(created.ms, 1)} ms (${(created.ms / base.ms).toFixed(2)}×), ` +
          `import with segment ${fmt(withSeg.ms, 1)} ms (${fmt(after - base.result)} joined), without ${fmt(without.ms, 1)} ms, recompute ${fmt(sync.ms, 1)} ms`,
      );
    }
    const m = (k: keyof Run) => median(runs.map((r) => r[k]));
    // The median of the per-run ratios: each run's create beside its own baseline.
    const ratio = median(runs.map((r) => r.create / r.baseline));
    console.log(`  median  baseline count(*)            ${fmt(m('baseline'), 1).padStart(9)} ms`);
    if (engine === 'postgres') console.log(`  median  baseline without parallel workers ${fmt(m('serial'), 1).padStart(5)} ms   (create is ${median(runs.map((r) => r.create / r.serial)).toFixed(2)}× this)`);
    console.log(`  median  create (full membership)     ${fmt(m('create'), 1).padStart(9)} ms   ratio ${ratio.toFixed(2)}× baseline (median of the runs' ratios)  (target ≤ ${TARGET}× ${ratio <= TARGET ? 'met' : 'MISSED'})`);
    console.log(`  median  import ${fmt(IMPORT)} with the segment  ${fmt(m('importWith'), 1).padStart(9)} ms`);
    console.log(`  median  import ${fmt(IMPORT)} without segments  ${fmt(m('importWithout'), 1).padStart(9)} ms   absorbing costs ${fmt(m('importWith') - m('importWithout'), 1)} ms`);
    console.log(`  median  type-wide recompute (no change) ${fmt(m('sync'), 1).padStart(6)} ms   ratio ${(m('sync') / m('baseline')).toFixed(2)}× baseline`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await b.drop();
  }
}

async function memberCount(b: BenchDatabase, segmentId: number): Promise<number> {
  const row = await b.db.selectFrom('segment_recipients').select((eb) => eb.fn.countAll<number>().as('n')).where('segment_id', '=', segmentId).executeTakeFirst();
  return Number(row?.n ?? 0);
}

for (const engine of ENGINES) {
  if (engine === 'postgres' && !(await pgReachable())) {
    console.log('\npostgres: not reachable, skipped');
    continue;
  }
  await benchEngine(engine);
}
