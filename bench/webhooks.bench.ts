/**
 * `npm run bench:webhooks`: can outgoing webhooks keep up with the mail? Measures, per engine:
 * (a) the mail: a single send to N contacts through the server (its queue worker in the process)
 *     into the SMTP sink: messages/s, from create until every message arrived;
 * (b) the webhooks: N `message.delivered` events written through `emitEvents` in transactions of
 *     10 (as the mail's sent marks write them), then the server's webhook worker posting each to a
 *     local `node:http` receiver (in this process) subscribed to `message.delivered`: events/s,
 *     from the worker's start until the receiver has every event and every delivery is marked.
 * Prints events/s beside messages/s and the ratio (target ≥ 1: the webhooks keep up).
 * Knobs (env): N or BENCH_RECIPIENTS (100000), BENCH_ENGINES (sqlite,postgres).
 */
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emitEvents } from '../src/events/outbox.js';
import { newSecret } from '../src/modules/webhooks/webhooks.service.js';
import { isoMicros } from '../src/util/time.js';
import { benchDatabase, seedAccount, seedContacts, type Engine } from './lib/db.js';
import { fmt, printFigure } from './lib/measure.js';
import { createSend, SEND_APP_SECRET, SEND_PUBLIC_URL, seedSenderAndGroup, sendForm, waitCompleted } from './lib/sends.js';
import { startServer } from './lib/server.js';
import { runWithSink, type BenchSink } from './lib/sink.js';

const N = Number(process.env.N ?? process.env.BENCH_RECIPIENTS ?? 100_000);
const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',') as Engine[];
const DATA = mkdtempSync(join(tmpdir(), 'bench-webhooks-'));

/** A receiver that answers 204 to every POST and counts the distinct `webhook-id`s. */
async function startReceiver(): Promise<{ url: string; ids: Set<string>; close(): Promise<void> }> {
  const ids = new Set<string>();
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      ids.add(String(req.headers['webhook-id']));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`,
    ids,
    close: () => {
      server.closeAllConnections();
      return new Promise((done) => server.close(() => done()));
    },
  };
}

async function until(ok: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await ok())) await new Promise((r) => setTimeout(r, 50));
}

async function benchEngine(engine: Engine, sink: BenchSink): Promise<void> {
  console.log(`\n== ${engine}: ${fmt(N)} messages, then ${fmt(N)} message.delivered events`);
  const bench = await benchDatabase(engine);
  const receiver = await startReceiver();
  try {
    const { user_id, headers } = await seedAccount(bench.db);
    const { typeIds } = await seedContacts(bench.db, user_id, N, { types: 1 });
    const base = await seedSenderAndGroup(bench.db, user_id);
    const env = { DATABASE_URL: bench.url, SMTP_URL: sink.url, APP_SECRET: SEND_APP_SECRET, PUBLIC_URL: SEND_PUBLIC_URL, DATA_DIR: DATA };

    // (a) The mail.
    await sink.reset();
    const mailServer = await startServer({ env: { ...env, BENCH_WORKER: '1' } });
    let mailRate: number;
    try {
      const t0 = performance.now();
      const utr = await createSend(mailServer.url, headers, sendForm(base, typeIds[0], 'Bench webhooks send'));
      await waitCompleted(mailServer.url, headers, utr, sink, N);
      mailRate = (N / (performance.now() - t0)) * 1000;
    } finally {
      await mailServer.stop();
    }
    console.log(`send                         ${fmt(mailRate).padStart(10)} msg/s`);

    // (b) The events, written as the mail's marks write them, then delivered.
    const at = isoMicros();
    await bench.db
      .insertInto('webhook_endpoints')
      .values({ user_id, url: receiver.url, events: '["message.delivered"]', secret: newSecret(), created_at: at, updated_at: at })
      .execute();
    const e0 = performance.now();
    for (let i = 0; i < N; i += 10) {
      const batch = Array.from({ length: Math.min(10, N - i) }, (_, j) => {
        const email = `contact${i + j}@bench.example.com`;
        return {
          userId: user_id,
          type: 'message.delivered' as const,
          data: { source: 'single_send', utr: 'bench', email, contact_id: i + j + 1, message_id: `<m${i + j}@bench.example.com>` },
          email,
        };
      });
      await bench.db.transaction().execute((trx) => emitEvents(trx, new Date(), batch));
    }
    const emitRate = (N / (performance.now() - e0)) * 1000;
    const hookServer = await startServer({ env: { ...env, BENCH_WEBHOOKS: '1', WEBHOOKS_ALLOW_PRIVATE: '1' } });
    let hookRate: number;
    try {
      const t0 = performance.now();
      await until(async () => {
        if (receiver.ids.size < N) return false;
        const left = await bench.db.selectFrom('webhook_deliveries').select('id').where('state', '!=', 'delivered').limit(1).execute();
        return left.length === 0;
      });
      hookRate = (N / (performance.now() - t0)) * 1000;
    } finally {
      await hookServer.stop();
    }
    console.log(`emitEvents (10 a transaction) ${fmt(emitRate).padStart(9)} events/s written`);
    printFigure('webhook deliveries', hookRate, { label: 'send', value: mailRate }, '/s', 1);
    if (receiver.ids.size !== N) throw new Error(`receiver got ${receiver.ids.size} distinct events of ${N}`);
  } finally {
    await receiver.close();
    await bench.drop();
  }
}

process.on('exit', () => rmSync(DATA, { recursive: true, force: true }));
runWithSink(ENGINES, benchEngine);
