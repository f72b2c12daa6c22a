/**
 * `npm run bench:automation`: 50,000 contacts imported (one CSV upload) into the contact type of a
 * live welcome automation whose first email is `instantly`: the time from the import's answer until
 * the SMTP sink (its own process) has all 50,000 messages, as a rate beside the rate of a single
 * send to 50,000 contacts measured on the same server in the same run (from create until status 3
 * and every message received). Target: ratio ≥ 0.7. Every run checks each address got exactly one
 * mail. See bench/README.md.
 * Knobs (env): BENCH_RECIPIENTS (50000), BENCH_ENGINES (sqlite,postgres).
 */
import { benchDatabase, seedAccount, seedContacts, type Engine } from './lib/db.js';
import { fmt, printFigure } from './lib/measure.js';
import {
  createSend,
  DESIGN_HTML,
  SEND_APP_SECRET,
  SEND_PUBLIC_URL,
  seedSenderAndGroup,
  seededEmails,
  sendForm,
  SUBJECT,
  waitCompleted,
} from './lib/sends.js';
import { startServer } from './lib/server.js';
import { runWithSink, tallyRecipients, type BenchSink } from './lib/sink.js';

const N = Number(process.env.BENCH_RECIPIENTS ?? 50_000);
const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',') as Engine[];
const TARGET = 0.7;

async function call(url: string, headers: Record<string, string>, method: 'GET' | 'POST', path: string, body?: unknown) {
  const r = await fetch(url + path, {
    method,
    headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await r.json()) as { message?: any; id?: number };
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
  return json;
}

/** Waits until the sink holds `n` messages; throws after 30 minutes. */
async function waitReceived(sink: BenchSink, n: number): Promise<void> {
  for (const deadline = Date.now() + 30 * 60_000; (await sink.total()).messages < n; await new Promise((r) => setTimeout(r, 50))) {
    if (Date.now() > deadline) throw new Error(`sink: ${(await sink.total()).messages}/${n} received`);
  }
}

async function checkDelivered(sink: BenchSink, from: number, n: number, what: string): Promise<void> {
  const t = tallyRecipients(await sink.counts(), seededEmails(from, n));
  if (t.missed || t.duplicated || t.unexpected)
    throw new Error(`${what}: missed ${t.missed}, duplicated ${t.duplicated}, unexpected ${t.unexpected}`);
}

async function benchEngine(engine: Engine, sink: BenchSink): Promise<void> {
  console.log(`\n== ${engine}: ${fmt(N)} contacts imported into a live welcome automation, beside a single send to ${fmt(N)}`);
  const bench = await benchDatabase(engine);
  const server = await startServer({
    env: { DATABASE_URL: bench.url, SMTP_URL: sink.url, BENCH_WORKER: '1', APP_SECRET: SEND_APP_SECRET, PUBLIC_URL: SEND_PUBLIC_URL },
  });
  try {
    const { user_id, headers } = await seedAccount(bench.db);
    const base = await seedSenderAndGroup(bench.db, user_id);
    const seeded = await seedContacts(bench.db, user_id, N, { types: 1 });

    // The single send: its rate is the baseline.
    await sink.reset();
    const s0 = performance.now();
    const utr = await createSend(server.url, headers, sendForm(base, seeded.typeIds[0], `Bench send of ${N}`));
    await waitCompleted(server.url, headers, utr, sink, N);
    const sendMs = performance.now() - s0;
    await checkDelivered(sink, 0, N, 'single send');
    const sendRate = (N / sendMs) * 1000;

    // A live welcome automation on an empty contact type, its first email instantly.
    const type = (await call(server.url, headers, 'POST', '/contacts-type/add', { name: 'Bench joiners' })).id!;
    const created = await call(server.url, headers, 'POST', '/automations/create', {
      type: 'welcome',
      automation_for: `contacts_${type}`,
      automation_name: 'Bench welcome',
      unsubscribe_group_id: base.group,
    });
    const auto: string = created.message.utr;
    await call(server.url, headers, 'POST', '/automations/schedule/create', {
      utr: auto,
      sender_id: base.sender,
      subject: SUBJECT,
      waiting_period: 1,
      waiting_type: 'instantly',
      template_id: 1,
      preview_img: 'blank.png',
      template_html: DESIGN_HTML,
    });
    await call(server.url, headers, 'GET', `/automations/set-live?utr=${auto}`);

    await sink.reset();
    const rows = seededEmails(N, N).map((email, i) => `${email},First${i},Last${i},101,City ${i % 50},${i} Main Street`);
    const form = new FormData();
    form.append('contact_type_id', String(type));
    form.append(
      'file',
      new Blob([`email,first_name,last_name,country,city,address_line1\n${rows.join('\n')}\n`], { type: 'text/csv' }),
      'joiners.csv',
    );
    const i0 = performance.now();
    const res = await fetch(`${server.url}/contacts/upload-csv`, { method: 'POST', headers, body: form });
    if (!res.ok) throw new Error(`import: ${res.status} ${await res.text()}`);
    const answered = performance.now();
    await waitReceived(sink, N);
    const autoMs = performance.now() - answered;
    await checkDelivered(sink, N, N, 'automation');
    const autoRate = (N / autoMs) * 1000;

    console.log(`single send ${fmt(N)}: ${(sendMs / 1000).toFixed(1)} s create → status 3`);
    console.log(`import of ${fmt(N)} (enrolment included): ${((answered - i0) / 1000).toFixed(1)} s until it answered`);
    const ratio = printFigure(`automation ${fmt(N)}`, autoRate, { label: 'single send', value: sendRate }, 'msg/s', TARGET);
    console.log(`  ${(autoMs / 1000).toFixed(1)} s from the import's answer until the sink had all ${fmt(N)}`);
    console.log(`summary ${engine}: automation ÷ single send ${ratio.toFixed(2)}`);
  } finally {
    await server.stop();
    await bench.drop();
  }
}

runWithSink(ENGINES, benchEngine);
