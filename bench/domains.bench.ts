/**
 * `npm run bench:domains`: the hourly re-check of sending domains. 1,000 domains, every record
 * published in a DNS server on loopback (test/support/dns-server.ts), made due all at once while a
 * single send to BENCH_RECIPIENTS contacts is flowing (a tenth of it arrived), and checked again by
 * the scheduler lane of the server (bench/server.ts with its worker, as `npm start` runs it): the
 * sweep must end within 60 s, and the send's rate at the sink during the sweep must stay at least
 * 0.9 of its rate over a window as long from the same point of the same send with no domain due,
 * measured next in the same run. Every run checks the sink got each address once and every domain
 * passed.
 * Knobs (env): BENCH_DOMAINS (1000), BENCH_RECIPIENTS (20000), BENCH_ENGINES (sqlite,postgres).
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Db } from '../src/db/index.js';
import { DKIM_KEY, seal } from '../src/util/seal.js';
import { isoMicros } from '../src/util/time.js';
import { TestDnsServer, type Zone } from '../test/support/dns-server.js';
import { benchDatabase, seedAccount, seedContacts, type Engine } from './lib/db.js';
import { fmt, printFigure } from './lib/measure.js';
import { createSend, SEND_APP_SECRET, SEND_PUBLIC_URL, seedSenderAndGroup, seededEmails, sendForm, waitCompleted } from './lib/sends.js';
import { startServer } from './lib/server.js';
import { wakeWorkers } from '../src/messages/mail.queue.js';
import { runWithSink, tallyRecipients, type BenchSink } from './lib/sink.js';

const DOMAINS = Number(process.env.BENCH_DOMAINS ?? 1000);
const N = Number(process.env.BENCH_RECIPIENTS ?? 20_000);
const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',') as Engine[];
const SWEEP_TARGET_MS = 60_000;
const RATE_TARGET = 0.9;
const SPF_INCLUDE = 'include:_spf.relay.bench';
const DATA = mkdtempSync(join(tmpdir(), 'bench-domains-'));

/** One key pair for every domain: making 1,000 RSA keys would take the bench a minute by itself. */
const keys = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'der' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});
const PUBLIC = Buffer.from(keys.publicKey).toString('base64');

const nameOf = (i: number) => `d${i}.bench.test`;

/** The zone where every domain passes each check. */
function zoneOf(n: number): Zone {
  const zone: Zone = { '_spf.relay.bench': { TXT: ['v=spf1 ip4:192.0.2.0/24 -all'] } };
  for (let i = 0; i < n; i++) {
    const d = nameOf(i);
    zone[`campaign._domainkey.${d}`] = { TXT: [`v=DKIM1; k=rsa; p=${PUBLIC}`] };
    zone[d] = { TXT: [`v=spf1 ${SPF_INCLUDE} ~all`], MX: [{ priority: 10, exchange: `mx.${d}` }] };
    zone[`_dmarc.${d}`] = { TXT: ['v=DMARC1; p=reject; rua=mailto:dmarc@bench.test'] };
  }
  return zone;
}

/** Inserts `n` verified domains of the account, checked at `checkedAt` (null: never, so all are due). */
async function seedDomains(db: Db, userId: number, n: number, checkedAt: string | null): Promise<void> {
  const sealed = seal(SEND_APP_SECRET, DKIM_KEY, keys.privateKey);
  const at = isoMicros(new Date());
  for (let i = 0; i < n; i += 200) {
    const rows = Array.from({ length: Math.min(200, n - i) }, (_, k) => ({
      user_id: userId,
      domain: nameOf(i + k),
      dkim_selector: 'campaign',
      public_key: PUBLIC,
      private_key: sealed,
      status: 'verified',
      checks: null,
      last_checked_at: checkedAt,
      created_at: at,
    }));
    await db.insertInto('sending_domains').values(rows).execute();
  }
}

const unchecked = async (db: Db) =>
  Number(
    (
      await db
        .selectFrom('sending_domains')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('last_checked_at', 'is', null)
        .executeTakeFirstOrThrow()
    ).n,
  );

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Run {
  /** msg/s of the whole send, create → status 3. */
  rate: number;
  /** msg/s at the sink during the window (the sweep, or as long as the sweep took, from the same point of the send). */
  windowRate: number;
  /** How long the sweep took (null: no sweep). */
  sweepMs: number | null;
}

/**
 * One send to N contacts on a fresh database and server, every domain checked a moment ago. Once
 * a tenth of the mail has arrived, the window opens: with `sweep`, every domain is made due (as an
 * hour passing does) and the window lasts until all are checked again; without, it lasts `windowMs`.
 */
async function run(engine: Engine, sink: BenchSink, dns: TestDnsServer, sweep: boolean, windowMs = 0): Promise<Run> {
  const bench = await benchDatabase(engine);
  await sink.reset();
  try {
    const account = await seedAccount(bench.db);
    const base = await seedSenderAndGroup(bench.db, account.user_id);
    const { typeIds } = await seedContacts(bench.db, account.user_id, N, { types: 1 });
    await seedDomains(bench.db, account.user_id, DOMAINS, isoMicros(new Date()));
    const server = await startServer({
      env: {
        DATABASE_URL: bench.url,
        SMTP_URL: sink.url,
        APP_SECRET: SEND_APP_SECRET,
        PUBLIC_URL: SEND_PUBLIC_URL,
        DATA_DIR: DATA,
        BENCH_WORKER: '1',
        DNS_SERVERS: dns.address,
        SPF_INCLUDE,
      },
    });
    try {
      const t0 = performance.now();
      const utr = await createSend(server.url, account.headers, sendForm(base, typeIds[0], `Bench send, sweep ${sweep}`));
      while ((await sink.total()).messages < N / 10) await pause(20);
      const m1 = (await sink.total()).messages;
      const w0 = performance.now();
      let sweepMs: number | null = null;
      if (sweep) {
        await bench.db.updateTable('sending_domains').set({ last_checked_at: null }).execute();
        await wakeWorkers(bench.db);
        while ((await unchecked(bench.db)) > 0) await pause(500);
        sweepMs = performance.now() - w0;
      } else await pause(windowMs);
      const windowRate = ((await sink.total()).messages - m1) / ((performance.now() - w0) / 1000);
      await waitCompleted(server.url, account.headers, utr, sink, N);
      const rate = N / ((performance.now() - t0) / 1000);
      const t = tallyRecipients(await sink.counts(), seededEmails(0, N));
      if (t.missed || t.duplicated || t.unexpected)
        throw new Error(`missed ${t.missed}, duplicated ${t.duplicated}, unexpected ${t.unexpected}`);
      const failed = await bench.db.selectFrom('sending_domains').select('id').where('status', '!=', 'verified').execute();
      if (failed.length) throw new Error(`${failed.length} domains did not pass their re-check`);
      return { rate, windowRate, sweepMs };
    } finally {
      await server.stop();
    }
  } finally {
    await bench.drop();
  }
}

runWithSink(ENGINES, async (engine, sink) => {
  const dns = await TestDnsServer.start();
  dns.zone = zoneOf(DOMAINS);
  try {
    console.log(`\n== ${engine}: ${fmt(DOMAINS)} sending domains re-checked beside a send to ${fmt(N)} contacts`);
    const during = await run(engine, sink, dns, true);
    const sweepMs = during.sweepMs ?? Infinity;
    const alone = await run(engine, sink, dns, false, sweepMs);
    console.log(
      `sweep of ${fmt(DOMAINS)} domains     ${fmt(sweepMs / 1000, 1)} s   (${fmt((DOMAINS * 1000) / sweepMs)} domains/s, ${fmt(dns.queries)} DNS questions in all)  (target ≤ ${SWEEP_TARGET_MS / 1000} s ${sweepMs <= SWEEP_TARGET_MS ? 'met' : 'MISSED'})`,
    );
    printFigure('send during the sweep', during.windowRate, { label: 'same window alone', value: alone.windowRate }, 'msg/s', RATE_TARGET);
    printFigure('whole send, sweep inside', during.rate, { label: 'whole send alone', value: alone.rate }, 'msg/s');
  } finally {
    await dns.close();
  }
});

process.on('exit', () => rmSync(DATA, { recursive: true, force: true }));
