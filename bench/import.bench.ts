/**
 * `npm run bench:import`: CSV import through HTTP (`POST /contacts/upload-csv`) of a generated
 * 200,000-row file into an empty contact type, against a baseline of the same rows inserted
 * straight through Kysely in one transaction (same engine, same run). The server is the compiled
 * one production runs (`npm run build`, then `dist/main.js`). Prints rows/s, the server's peak RSS
 * (VmHWM), its CPU time and on PostgreSQL the database backends' CPU time (wall time well above
 * CPU time / 2 cores means the machine is busy) and the ratio. See bench/README.md. Knobs (env):
 * BENCH_IMPORT_ROWS (200000), BENCH_RUNS (3), BENCH_ENGINES (sqlite,postgres), BENCH_BUILD=0 (use
 * dist/ as it is), BENCH_VERBOSE=1.
 */
import { execSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, openAsBlob, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { once } from 'node:events';
import type { Db } from '../src/db/index.js';
import { isoMicros } from '../src/util/time.js';
import { benchDatabase, pgReachable, seedAccount, type Engine } from './lib/db.js';
import { fmt, fmtBytes, median, memoryOf, printFigure, timed } from './lib/measure.js';
import { startServer } from './lib/server.js';
import { insertContactType } from '../src/modules/contact-types/contact-types.queries.js';

const ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 200_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',') as Engine[];
const TARGET_ROWS_PER_S: Record<Engine, number> = { sqlite: 100_000, postgres: 50_000 };
const TARGET_RSS_MB = 300;

const HEADER = [
  'first_name',
  'last_name',
  'email',
  'alt_email',
  'country',
  'state',
  'city',
  'address_line1',
  'address_line2',
  'state_province_region',
  'postal_code',
  'father_name',
  'designation',
  'company_name',
  'age',
  'birth_date',
  'join_date',
];
const COUNTRIES = [
  ['India', '101'],
  ['US', '233'],
  ['de', '82'],
  ['75', '75'],
  ['Brazil', '31'],
];
const DESIGNATIONS = ['Engineer', 'Manager', 'Analyst', 'Director', 'Designer'];

/** Row `i` of the file: realistic values, every fourth with a quoted comma, countries by name, ISO-2 and id. */
function rowAt(i: number): { cells: string[]; countryId: string } {
  const [country, countryId] = COUNTRIES[i % COUNTRIES.length];
  const day = String(1 + (i % 28)).padStart(2, '0');
  const cells = [
    `First${i}`,
    `Last${i}`,
    `contact${i}@bench.example.com`,
    i % 5 === 0 ? `alt${i}@bench.example.org` : '',
    country,
    `State ${i % 40}`,
    `City ${i % 500}`,
    i % 4 === 0 ? `"${i} Market Street, Floor ${i % 9}"` : `${i} Market Street`,
    '',
    `Region ${i % 12}`,
    String(10000 + (i % 89999)),
    `Father${i}`,
    DESIGNATIONS[i % DESIGNATIONS.length],
    `Company ${i % 700}`,
    String(18 + (i % 60)),
    `19${50 + (i % 50)}-06-${day}T08:30`,
    `2023-01-${day}T09:00`,
  ];
  return { cells, countryId };
}

/** Writes the CSV (header + ROWS rows) with backpressure; returns its size in bytes. */
async function writeCsv(path: string): Promise<number> {
  const out = createWriteStream(path);
  let chunk = HEADER.join(',') + '\n';
  for (let i = 0; i < ROWS; i++) {
    chunk += rowAt(i).cells.join(',') + '\n';
    if (chunk.length > 1 << 16) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'finish');
  return statSync(path).size;
}

/** The baseline: the same rows inserted straight through Kysely, 1,000 per statement, one transaction. */
async function rawInsert(db: Db, userId: number, typeId: number): Promise<number> {
  const now = isoMicros(new Date());
  const { ms } = await timed(() =>
    db.transaction().execute(async (trx) => {
      for (let start = 0; start < ROWS; start += 1000) {
        const rows = [];
        for (let i = start; i < Math.min(ROWS, start + 1000); i++) {
          const { cells: c, countryId } = rowAt(i);
          const custom = { father_name: c[11], designation: c[12], company_name: c[13], age: c[14], birth_date: c[15], join_date: c[16] };
          rows.push({
            user_id: userId,
            contact_type_id: typeId,
            first_name: c[0],
            last_name: c[1],
            email: c[2],
            email_key: c[2],
            alt_email: c[3] || null,
            country: countryId,
            state: c[5],
            city: c[6],
            address_line1: c[7].replace(/"/g, ''),
            address_line2: null,
            state_province_region: c[9],
            postal_code: c[10],
            custom_field: JSON.stringify(custom),
            deleted_at: null,
            created_at: now,
            updated_at: now,
          });
        }
        await trx.insertInto('contacts').values(rows).execute();
      }
    }),
  );
  return (ROWS / ms) * 1000;
}

interface RunResult {
  rowsPerS: number;
  peakMb: number;
  baselineRowsPerS: number;
  /** Server CPU seconds (all its threads) for the upload: beside the wall time, shows contention. */
  cpuS: number;
  /** PostgreSQL: CPU seconds of the server's database backends (their whole life: the upload, mostly). */
  dbCpuS?: number;
  wallS: number;
}

/** The repository root, and the compiled entry the server runs. */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ENTRY = join(ROOT, 'dist', 'main.js');

const CLK_TCK = Number(execSync('getconf CLK_TCK').toString().trim()) || 100;

/** CPU seconds a process has used (user + system, all threads), from /proc/<pid>/stat. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/** One run on a fresh database: a fresh server, one upload, its peak RSS, then the baseline. */
async function runOnce(engine: Engine, csvPath: string, dataDir: string): Promise<RunResult> {
  const bench = await benchDatabase(engine);
  try {
    const account = await seedAccount(bench.db);
    const typeId = await insertContactType(bench.db, account.user_id, 'Imported', new Date());
    const backends = async () =>
      (await sql<{ pid: number }>`select pid from pg_stat_activity where datname = current_database()`.execute(bench.db)).rows.map(
        (r) => r.pid,
      );
    const own = new Set(engine === 'postgres' ? await backends() : []);
    // `info` for pino's "Server listening at <url>" line, which startServer waits for.
    const server = await startServer({
      entry: ENTRY,
      nodeArgs: process.env.BENCH_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] : [],
      env: { DATABASE_URL: bench.url, DATA_DIR: dataDir, LOG_LEVEL: 'info' },
    });
    let rowsPerS: number;
    let peakMb: number;
    let cpuS: number;
    let wallS: number;
    let dbCpuS: number | undefined;
    try {
      const cpu0 = cpuSeconds(server.pid);
      const form = new FormData();
      form.append('contact_type_id', String(typeId));
      form.append('file', await openAsBlob(csvPath, { type: 'text/csv' }), 'contacts.csv');
      const { ms, result } = await timed(async () => {
        const res = await fetch(`${server.url}/contacts/upload-csv`, { method: 'POST', headers: account.headers, body: form });
        return { status: res.status, body: (await res.json()) as { summary?: { created: number; skipped: number } } };
      });
      if (result.status !== 200 || result.body.summary?.created !== ROWS) {
        throw new Error(`import failed: HTTP ${result.status} ${JSON.stringify(result.body).slice(0, 500)}`);
      }
      rowsPerS = (ROWS / ms) * 1000;
      peakMb = memoryOf(server.pid).peakKb / 1024;
      cpuS = cpuSeconds(server.pid) - cpu0;
      wallS = ms / 1000;
      if (engine === 'postgres') {
        // The server's backends: every one but this process's own, opened before the server started.
        dbCpuS = (await backends()).filter((pid) => !own.has(pid)).reduce((sum, pid) => sum + cpuSeconds(pid), 0);
      }
    } finally {
      await server.stop();
    }
    const baselineRowsPerS = await rawInsert(
      bench.db,
      account.user_id,
      await insertContactType(bench.db, account.user_id, 'Baseline', new Date()),
    );
    return { rowsPerS, peakMb, baselineRowsPerS, cpuS, dbCpuS, wallS };
  } finally {
    await bench.drop();
  }
}

async function main(): Promise<void> {
  if (process.env.BENCH_BUILD !== '0') execSync('npx tsc -p tsconfig.build.json', { cwd: ROOT, stdio: 'inherit' });
  const dir = mkdtempSync(join(tmpdir(), 'campaign-import-bench-'));
  try {
    const csvPath = join(dir, 'contacts.csv');
    const bytes = await writeCsv(csvPath);
    console.log(`CSV import benchmark: ${fmt(ROWS)} rows, ${fmtBytes(bytes)}, ${RUNS} runs per engine (medians)`);
    for (const engine of ENGINES) {
      if (engine === 'postgres' && !(await pgReachable())) {
        console.log('postgres: not reachable, skipped');
        continue;
      }
      const results: RunResult[] = [];
      for (let run = 0; run < RUNS; run++) {
        const load = loadavg()[0];
        const r = await runOnce(engine, csvPath, join(dir, `data-${engine}-${run}`));
        results.push(r);
        console.log(
          `  ${engine} run ${run + 1}: ${fmt(r.rowsPerS)} rows/s (${r.wallS.toFixed(2)} s, server CPU ${r.cpuS.toFixed(2)} s` +
            `${r.dbCpuS === undefined ? '' : `, database CPU ${r.dbCpuS.toFixed(2)} s`}), ` +
            `peak RSS ${fmt(r.peakMb)} MB, baseline ${fmt(r.baselineRowsPerS)} rows/s, load ${load.toFixed(1)}`,
        );
      }
      const rowsPerS = median(results.map((r) => r.rowsPerS));
      const peak = median(results.map((r) => r.peakMb));
      console.log(`${engine}:`);
      printFigure('  import via HTTP', rowsPerS, { label: 'raw insert', value: median(results.map((r) => r.baselineRowsPerS)) }, 'rows/s');
      const okRate = rowsPerS >= TARGET_ROWS_PER_S[engine];
      console.log(`  ${'target'.padEnd(26)} ${fmt(TARGET_ROWS_PER_S[engine])} rows/s ${okRate ? 'met' : 'MISSED'}`);
      console.log(
        `  ${'server peak RSS'.padEnd(26)} ${fmt(peak)} MB (target ≤ ${TARGET_RSS_MB} MB ${peak <= TARGET_RSS_MB ? 'met' : 'MISSED'})`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
