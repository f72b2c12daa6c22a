/**
 * `npm run bench:api`: throughput of the hottest read endpoints against a bare Fastify route in
 * the same server process, on 100,000 contacts, and the server's memory while it streams all of
 * them; then the contact list's first page again on 1,000,000 contacts, each time beside the same
 * page without its total. See bench/README.md. Knobs (env): BENCH_CONTACTS, BENCH_LARGE (0: skip
 * the second size), BENCH_DURATION (s), BENCH_RUNS, BENCH_CONNECTIONS, BENCH_ENGINES
 * (sqlite,postgres), BENCH_RATE_LIMIT=0 to skip the rate-limited pass, BENCH_ONLY=memory|load to
 * run one half, BENCH_ONLY=create for the creates alone (with and without `Idempotency-Key`).
 * Details is also measured through a person's session (the cookie instead of the keys) and through
 * a key with scopes (`contacts.read`) instead of the `full` Default key; sign-in's time is printed.
 */
import http from 'node:http';
import { availableParallelism } from 'node:os';
import { benchDatabase, pgReachable, seedAccount, seedContacts, type Engine } from './lib/db.js';
import { runLoad, type LoadResult } from './lib/load.js';
import { fmt, fmtBytes, median, memoryOf, printFigure, resetPeakRss, sampleMemory, timed } from './lib/measure.js';
import { startServer, type BenchServer } from './lib/server.js';
import type { Config } from '../src/config.js';
import type { Db } from '../src/db/index.js';
import { newKeyPair } from '../src/modules/access/keys.pair.js';
import { insertKey } from '../src/modules/access/keys.queries.js';
import { inviteFirstOwner } from '../src/modules/access/users.service.js';
import { hashSecret } from '../src/util/secrets.js';

const N = Number(process.env.BENCH_CONTACTS ?? 100_000);
const LARGE = Number(process.env.BENCH_LARGE ?? 1_000_000);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',') as Engine[];
const WITH_RATE_LIMIT = process.env.BENCH_RATE_LIMIT !== '0';
const ONLY = process.env.BENCH_ONLY ?? '';
// The server on the last CPU, the load generator on the others (BENCH_PIN=0: no pinning).
const PIN_CPU = process.env.BENCH_PIN === '0' ? undefined : availableParallelism() - 1;
const TARGET = 0.5; // details ≥ 50% of the bare route's requests/s (the target)
const PAGE_TARGET = 0.8; // a list page with its total ≥ 80% of the same page without it
const GROWTH_TARGET = 0.8; // the page (÷ bare) at LARGE contacts ≥ 80% of its figure at N
const KEYED_TARGET = 0.8; // a create with an Idempotency-Key ≥ 80% of the same create without
const SESSION_TARGET = 0.9; // details through a session ≥ 90% of details through keys
const SCOPED_TARGET = 0.95; // details through a key with scopes ≥ 95% of details through the full key
const PAGE = '?page=1&per_page=50';

interface Target {
  name: string;
  path: string | (() => string);
  auth: boolean;
  /** Headers of its own instead of the account's keys (a session cookie, another key). */
  headers?: Record<string, string>;
  /** A POST per request (see runLoad). */
  post?: () => { body: string; headers?: Record<string, string> };
}

/**
 * `POST /contacts-type/add` with a new name each request (the name must be free), and with an
 * `Idempotency-Key` of its own too when `keyed`: every keyed request claims its key and stores its
 * answer (two small writes), none is a replay.
 */
function createTarget(name: string, keyed: boolean): Target {
  const run = Math.random().toString(36).slice(2, 8);
  let n = 0;
  return {
    name,
    path: '/contacts-type/add',
    auth: true,
    post: () => {
      const id = `${name}-${run}-${++n}`;
      return { body: `name=${id}`, headers: keyed ? { 'idempotency-key': id } : undefined };
    },
  };
}

/** Streams `GET path` and counts bytes and `"fullname"` keys (one per contact) without keeping the body. */
function streamCount(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; bytes: number; items: number; tail: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        let bytes = 0;
        let items = 0;
        let carry = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          bytes += Buffer.byteLength(chunk);
          const text = carry + chunk;
          items += text.split('"fullname":').length - 1;
          carry = text.slice(-10); // shorter than the key, so no match is counted twice
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, items, tail: carry }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/**
 * Peak RSS around full, unpaged lists: the stream must not hold the whole list. Twice on the same
 * server: the first also pays for V8 sizing up its heap on a fresh process; the second shows the
 * steady state (a list that were held in memory would grow the peak again).
 */
async function measureFullList(
  server: BenchServer,
  headers: Record<string, string>,
): Promise<{ bytes: number; growths: number[]; anonGrowths: number[] }> {
  const out = { bytes: 0, growths: [] as number[], anonGrowths: [] as number[] };
  for (const round of ['first', 'second']) {
    const before = memoryOf(server.pid);
    const reset = resetPeakRss(server.pid);
    const sampler = sampleMemory(server.pid);
    const { ms, result } = await timed(() => streamCount(`${server.url}/contacts/list`, headers));
    const { maxAnonKb, maxFileKb } = sampler.stop();
    const after = memoryOf(server.pid);
    if (result.status !== 200 || result.items !== N || !result.tail.endsWith(']}}')) {
      throw new Error(`full list: status ${result.status}, ${result.items} of ${N} contacts`);
    }
    const growth = Math.max(0, (after.peakKb - (reset ? before.rssKb : before.peakKb)) * 1024);
    console.log(`${round} full list (GET /contacts/list, ${fmt(N)} contacts): ${fmtBytes(result.bytes)} in ${fmt(ms)} ms`);
    console.log(
      `  server RSS before ${fmtBytes(before.rssKb * 1024)} (peak so far ${fmtBytes(before.peakKb * 1024)})` +
        `, peak during the list ${fmtBytes(after.peakKb * 1024)}${reset ? '' : ' (peak since start: clear_refs refused)'}` +
        `: +${fmtBytes(growth)} = ${((100 * growth) / result.bytes).toFixed(0)}% of the response`,
    );
    const anonGrowth = Math.max(0, (maxAnonKb - before.anonKb) * 1024);
    console.log(
      `  of it, sampled every 5 ms: anonymous memory (heap) +${fmtBytes(anonGrowth)}, ` +
        `mapped files (on SQLite the database map, at most 64 MiB: page cache the kernel can drop) +${fmtBytes(Math.max(0, (maxFileKb - before.fileKb) * 1024))}`,
    );
    out.bytes = result.bytes;
    out.growths.push(growth);
    out.anonGrowths.push(anonGrowth);
  }
  return out;
}

/** `RUNS` rounds of every target in turn (interleaved, so drift hits all alike); per target: the runs. */
async function measureTargets(server: BenchServer, targets: Target[], headers: Record<string, string>): Promise<Map<string, LoadResult[]>> {
  const load = (t: Target, duration: number) =>
    runLoad({
      url: server.url,
      path: t.path,
      post: t.post,
      headers: t.headers ?? (t.auth ? headers : undefined),
      connections: CONNECTIONS,
      duration,
    });
  for (const t of targets) await load(t, Math.min(3, DURATION)); // warm-up: JIT, caches, pool
  const results = new Map(targets.map((t) => [t.name, [] as LoadResult[]]));
  for (let r = 0; r < RUNS; r++) {
    for (const t of targets) {
      const res = await load(t, DURATION);
      results.get(t.name)!.push(res);
      console.log(`  run ${r + 1}/${RUNS} ${t.name.padEnd(8)} ${fmt(res.rps).padStart(8)} req/s  p99 ${res.p99} ms`);
    }
  }
  return results;
}

interface Figure {
  rps: number;
  p99: number;
  /** Median of the per-round ratios to the bare route (the target's figure). */
  ratio: number;
}

/** Prints median req/s and p99 per target and each one's ratio to the bare route; returns the medians. */
function report(title: string, results: Map<string, LoadResult[]>): Map<string, Figure> {
  console.log(`\n${title} (median of ${RUNS} × ${DURATION} s, ${CONNECTIONS} connections)`);
  const figures = new Map<string, Figure>();
  const bareRuns = results.get('bare')!;
  for (const [name, runs] of results) {
    // Each round's figure beside the bare route's in the same round: drift between rounds cancels.
    const ratios = runs.map((r, i) => r.rps / bareRuns[i].rps);
    figures.set(name, { rps: median(runs.map((r) => r.rps)), p99: median(runs.map((r) => r.p99)), ratio: median(ratios) });
  }
  const bare = figures.get('bare')!;
  for (const [name, f] of figures) {
    if (name === 'bare') {
      console.log(`${'bare (GET /bench/bare)'.padEnd(28)} ${fmt(f.rps).padStart(10)} req/s   p99 ${f.p99} ms`);
      continue;
    }
    printFigure(`${name} (p99 ${f.p99} ms)`, f.rps, { label: 'bare', value: bare.rps }, 'req/s');
    const rounds = results
      .get(name)!
      .map((r, i) => (r.rps / bareRuns[i].rps).toFixed(2))
      .join(' ');
    const check = name === 'details' ? `  (target ≥ ${TARGET.toFixed(2)} ${f.ratio >= TARGET ? 'met' : 'MISSED'})` : '';
    console.log(`  ${name} ÷ bare, round by round: ${rounds}; median ${f.ratio.toFixed(2)}${check}`);
  }
  const details = results.get('details');
  for (const [name, target, what] of [
    ['session', SESSION_TARGET, 'details through a session'],
    ['scoped', SCOPED_TARGET, 'details through a key with scopes'],
  ] as const) {
    const runs = results.get(name);
    if (!runs || !details) continue;
    const perRound = runs.map((r, i) => r.rps / details[i].rps);
    const ratio = median(perRound);
    figures.set(`${name}÷details`, { rps: NaN, p99: NaN, ratio });
    console.log(
      `  ${name} ÷ details (${what} ÷ through the full key), round by round: ${perRound.map((r) => r.toFixed(2)).join(' ')}; ` +
        `median ${ratio.toFixed(2)}  (target ≥ ${target.toFixed(2)} ${ratio >= target ? 'met' : 'MISSED'})`,
    );
  }
  const create = results.get('create');
  const keyed = results.get('keyed');
  if (create && keyed) {
    const perRound = keyed.map((r, i) => r.rps / create[i].rps);
    const ratio = median(perRound);
    figures.set('keyed÷create', { rps: NaN, p99: NaN, ratio });
    console.log(
      `  keyed ÷ create (the same create with an Idempotency-Key), round by round: ${perRound.map((r) => r.toFixed(2)).join(' ')}; ` +
        `median ${ratio.toFixed(2)}  (target ≥ ${KEYED_TARGET.toFixed(2)} ${ratio >= KEYED_TARGET ? 'met' : 'MISSED'})`,
    );
  }
  const list = results.get('list');
  const ceiling = results.get('no-total');
  if (list && ceiling) {
    const perRound = list.map((r, i) => r.rps / ceiling[i].rps);
    const ratio = median(perRound);
    figures.set('list÷no-total', { rps: NaN, p99: NaN, ratio });
    console.log(
      `  list ÷ no-total (the same page without its total), round by round: ${perRound.map((r) => r.toFixed(2)).join(' ')}; ` +
        `median ${ratio.toFixed(2)}  (target ≥ ${PAGE_TARGET.toFixed(2)} ${ratio >= PAGE_TARGET ? 'met' : 'MISSED'})`,
    );
  }
  return figures;
}

/** A key of the account with scopes (`contacts.read` only): the headers that authenticate as it. */
async function scopedKey(db: Db, userId: number): Promise<Record<string, string>> {
  const { publicKey, secretKey } = newKeyPair();
  const scopes = JSON.stringify(['contacts.read']);
  await insertKey(
    db,
    userId,
    { name: 'Scoped', publicKey, secretHash: hashSecret(secretKey), scopes, createdBy: null, rootPerson: null },
    new Date(),
  );
  return { publickey: publicKey, secretkey: secretKey };
}

/**
 * An owner of the account, invited and accepted through the server, then signed in `times` times:
 * the session cookie of the last sign-in, and each sign-in's time (the password hash dominates it).
 */
async function signedIn(db: Db, server: BenchServer, userId: number, times: number): Promise<{ cookie: string; ms: number[] }> {
  const email = `owner.${Date.now()}@example.com`;
  const password = 'a long bench password';
  const link = await inviteFirstOwner(db, { publicUrl: server.url } as Config, userId, email, new Date());
  const post = (path: string, body: object) =>
    fetch(server.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const accepted = await post('/session/accept-invite', { token: link.split('/').pop(), name: 'Bench', password });
  if (!accepted.ok) throw new Error(`accept-invite: ${accepted.status} ${await accepted.text()}`);
  const ms: number[] = [];
  let cookie = '';
  for (let i = 0; i < times; i++) {
    const { ms: took, result } = await timed(() => post('/session/sign-in', { email, password }));
    if (!result.ok) throw new Error(`sign-in: ${result.status} ${await result.text()}`);
    await result.text();
    ms.push(took);
    cookie = result.headers
      .getSetCookie()
      .find((c) => c.startsWith('campaign_session='))!
      .split(';')[0];
  }
  return { cookie, ms };
}

/** One line per engine for the closing tables (bench/README.md keeps the latest). */
const people: string[] = [];
const summary: string[] = [];
const creates: string[] = [];
const pages: string[] = [];
const cell = (f: Figure | undefined, bare: Figure | undefined) =>
  f && bare ? `${fmt(f.rps)} (${f.ratio.toFixed(2)}, p99 ${f.p99} ms)` : '–';

async function benchEngine(engine: Engine): Promise<void> {
  console.log(`\n=== ${engine} ===`);
  const bdb = await benchDatabase(engine);
  const servers: BenchServer[] = [];
  try {
    const account = await seedAccount(bdb.db);
    const seeded = await timed(() => seedContacts(bdb.db, account.user_id, N));
    const { firstId, lastId } = seeded.result;
    console.log(`seeded ${fmt(N)} contacts in ${fmt(seeded.ms)} ms`);
    const randomId = () => firstId + Math.floor(Math.random() * (lastId - firstId + 1));
    const targets: Target[] = [
      { name: 'bare', path: '/bench/bare', auth: false },
      { name: 'details', path: () => `/contacts/details?contact_id=${randomId()}`, auth: true },
      { name: 'list', path: `/contacts/list${PAGE}`, auth: true },
      // The list's ceiling: the same page without its total (bench/server.ts).
      { name: 'no-total', path: `/bench/contacts-page-no-total${PAGE}`, auth: true },
      // A ceiling, not a target: one indexed lookup and nothing else (bench/server.ts).
      { name: 'one-query', path: '/bench/one-query', auth: false },
      createTarget('create', false),
      createTarget('keyed', true),
    ];

    const server = await startServer({ cpu: PIN_CPU, env: { DATABASE_URL: bdb.url, BENCH_BARE_ROUTE: '1', RATE_LIMIT_PER_MINUTE: '0' } });
    servers.push(server);
    const session = await signedIn(bdb.db, server, account.user_id, 5);
    console.log(
      `sign-in (POST /session/sign-in, scrypt N=2^15 r=8 p=3): ${session.ms.map((m) => fmt(m)).join(', ')} ms; median ${fmt(median(session.ms))} ms`,
    );
    targets.splice(
      2,
      0,
      { name: 'session', path: () => `/contacts/details?contact_id=${randomId()}`, auth: true, headers: { cookie: session.cookie } },
      {
        name: 'scoped',
        path: () => `/contacts/details?contact_id=${randomId()}`,
        auth: true,
        headers: await scopedKey(bdb.db, account.user_id),
      },
    );
    const memory = ONLY === 'load' || ONLY === 'create' ? null : await measureFullList(server, account.headers);
    let off = new Map<string, Figure>();
    let on = new Map<string, Figure>();
    if (ONLY === 'create') {
      const pair = targets.filter((t) => ['bare', 'create', 'keyed'].includes(t.name));
      off = report(`${engine}, creates with and without Idempotency-Key`, await measureTargets(server, pair, account.headers));
    } else if (ONLY !== 'memory') {
      off = report(`${engine}, rate limit off`, await measureTargets(server, targets, account.headers));
      await server.stop();
      if (WITH_RATE_LIMIT) {
        // The limit is on (the plugin does its per-account bookkeeping) but set too high to trip.
        const limited = await startServer({
          cpu: PIN_CPU,
          env: { DATABASE_URL: bdb.url, BENCH_BARE_ROUTE: '1', RATE_LIMIT_PER_MINUTE: '1000000000' },
        });
        servers.push(limited);
        on = report(`${engine}, rate limit on (never tripped)`, await measureTargets(limited, targets.slice(0, 2), account.headers));
        await limited.stop();
      }
    }
    if (off.get('session÷details')) {
      people.push(
        `| ${engine} | ${cell(off.get('details'), off.get('bare'))} | ${cell(off.get('session'), off.get('bare'))} | ${off.get('session÷details')!.ratio.toFixed(2)} | ` +
          `${cell(off.get('scoped'), off.get('bare'))} | ${off.get('scoped÷details')!.ratio.toFixed(2)} | ${fmt(median(session.ms))} ms |`,
      );
    }
    if (off.get('keyed÷create')) {
      creates.push(
        `| ${engine} | ${cell(off.get('create'), off.get('bare'))} | ${cell(off.get('keyed'), off.get('bare'))} | ${off.get('keyed÷create')!.ratio.toFixed(2)} |`,
      );
    }
    let large = new Map<string, Figure>();
    if (ONLY !== 'memory' && ONLY !== 'create' && LARGE > N) {
      const more = await timed(() => seedContacts(bdb.db, account.user_id, LARGE - N, { typeIds: seeded.result.typeIds, from: N }));
      console.log(`\nseeded ${fmt(LARGE - N)} more contacts (${fmt(LARGE)} in all) in ${fmt(more.ms)} ms`);
      const big = await startServer({ cpu: PIN_CPU, env: { DATABASE_URL: bdb.url, BENCH_BARE_ROUTE: '1', RATE_LIMIT_PER_MINUTE: '0' } });
      servers.push(big);
      const pageTargets = targets.filter((t) => ['bare', 'list', 'no-total'].includes(t.name));
      large = report(`${engine}, ${fmt(LARGE)} contacts, rate limit off`, await measureTargets(big, pageTargets, account.headers));
      await big.stop();
      const growth = large.get('list')!.ratio / off.get('list')!.ratio;
      console.log(
        `list page (÷ bare) at ${fmt(LARGE)} ÷ at ${fmt(N)} contacts: ${growth.toFixed(2)}  ` +
          `(target ≥ ${GROWTH_TARGET.toFixed(2)} ${growth >= GROWTH_TARGET ? 'met' : 'MISSED'})`,
      );
      pages.push(
        `| ${engine} | ${cell(off.get('list'), off.get('bare'))} | ${cell(off.get('no-total'), off.get('bare'))} | ${off.get('list÷no-total')!.ratio.toFixed(2)} | ` +
          `${cell(large.get('list'), large.get('bare'))} | ${cell(large.get('no-total'), large.get('bare'))} | ${large.get('list÷no-total')!.ratio.toFixed(2)} | ${growth.toFixed(2)} |`,
      );
    }
    const listMemory = memory
      ? `${fmtBytes(memory.bytes)}: +${fmtBytes(memory.growths[0])} / +${fmtBytes(memory.growths[1])} (heap +${fmtBytes(memory.anonGrowths[0])} / +${fmtBytes(memory.anonGrowths[1])})`
      : '–';
    summary.push(
      `| ${engine} | ${off.get('bare') ? fmt(off.get('bare')!.rps) : '–'} | ${cell(off.get('details'), off.get('bare'))} | ` +
        `${cell(off.get('list'), off.get('bare'))} | ${cell(off.get('one-query'), off.get('bare'))} | ${cell(on.get('details'), on.get('bare'))} | ${listMemory} |`,
    );
  } finally {
    for (const s of servers) await s.stop();
    await bdb.drop();
  }
}

async function main(): Promise<void> {
  console.log(`bench:api — ${fmt(N)} contacts, node ${process.version}`);
  for (const engine of ENGINES) {
    if (engine === 'postgres' && !(await pgReachable())) {
      console.log('\n=== postgres === skipped: no PostgreSQL at BENCH_PG_URL / 127.0.0.1:5432');
      continue;
    }
    await benchEngine(engine);
  }
  console.log(
    '\n| engine | bare req/s | details req/s (÷ bare, p99) | list page req/s (÷ bare, p99) | one-query ceiling (÷ bare, p99) | details, rate limit on | full list: size, peak RSS growth 1st / 2nd (anonymous) |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const line of summary) console.log(line);
  if (people.length) {
    console.log('\nGET /contacts/details through the full key, a session and a key with scopes (÷ bare, same run); sign-in time:');
    console.log(
      '| engine | full key (÷ bare, p99) | session (÷ bare, p99) | session ÷ key | scoped key (÷ bare, p99) | scoped ÷ full | sign-in (median) |',
    );
    console.log('|---|---|---|---|---|---|---|');
    for (const line of people) console.log(line);
  }
  if (creates.length) {
    console.log('\nPOST /contacts-type/add, without and with an Idempotency-Key (÷ bare, same run):');
    console.log('| engine | create req/s (÷ bare, p99) | keyed create req/s (÷ bare, p99) | keyed ÷ create |');
    console.log('|---|---|---|---|');
    for (const line of creates) console.log(line);
  }
  if (pages.length) {
    console.log(`\nGET /contacts/list${PAGE}, with its total and without (÷ bare, same run):`);
    console.log(
      `| engine | ${fmt(N)}: page | ${fmt(N)}: page without total | ÷ | ${fmt(LARGE)}: page | ${fmt(LARGE)}: page without total | ÷ | page ÷ bare, ${fmt(LARGE)} ÷ ${fmt(N)} |`,
    );
    console.log('|---|---|---|---|---|---|---|---|');
    for (const line of pages) console.log(line);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
