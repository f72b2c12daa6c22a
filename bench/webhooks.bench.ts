/**
 * `npm run bench:webhooks`: can outgoing webhooks keep up with the mail? Measures, per engine:
 * (a) the baseline: a single send to N contacts through the server (its queue worker in the
 *     process) into the SMTP sink, no endpoint: messages/s, from create until status 3 and every
 *     message arrived;
 * (b) the same send again with an endpoint taking `message.delivered` on a local `node:http`
 *     receiver (in this process), the server running its mail and webhook workers: the events are
 *     written by the mail's sent marks and posted while the mail goes out. events/s = N ÷ (create
 *     → the last event's arrival).
 * Prints events/s beside the messages/s of the same send (target ≥ 1: the events keep up with the
 * mail) and of the send alone (what the webhooks cost the mail shows there too), and how long after
 * the send's status 3 the last event arrived (target ≤ 10 s).
 * Knobs (env): N or BENCH_RECIPIENTS (100000), BENCH_ENGINES (sqlite,postgres).
 */
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newSecret } from '../src/modules/webhooks/webhooks.service.js';
import { seal, WEBHOOK_SECRET } from '../src/util/seal.js';
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
async function startReceiver(): Promise<{ url: string; ids: Set<string>; lastAt: number; close(): Promise<void> }> {
  const ids = new Set<string>();
  const receiver = { url: '', ids, lastAt: 0, close: async () => {} };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const before = ids.size;
      ids.add(String(req.headers['webhook-id']));
      if (ids.size > before) receiver.lastAt = performance.now();
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  receiver.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
  receiver.close = () => {
    server.closeAllConnections();
    return new Promise((done) => server.close(() => done()));
  };
  return receiver;
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

    // (b) The same send again, now with an endpoint taking `message.delivered`: the mail's sent
    // marks write the events, and the server's webhook worker posts them while the mail goes out.
    const at = isoMicros(new Date());
    await bench.db
      .insertInto('webhook_endpoints')
      .values({
        user_id,
        url: receiver.url,
        events: '["message.delivered"]',
        secret: seal(SEND_APP_SECRET, WEBHOOK_SECRET, newSecret()),
        created_at: at,
        updated_at: at,
      })
      .execute();
    await sink.reset();
    const server = await startServer({ env: { ...env, BENCH_WORKER: '1', BENCH_WEBHOOKS: '1', WEBHOOKS_ALLOW_PRIVATE: '1' } });
    let withHooksRate: number;
    let eventRate: number;
    let lagMs: number;
    try {
      const t0 = performance.now();
      const utr = await createSend(server.url, headers, sendForm(base, typeIds[0], 'Bench webhooks send, with an endpoint'));
      await waitCompleted(server.url, headers, utr, sink, N, { everyMs: 50 });
      const completed = performance.now();
      await until(() => receiver.ids.size >= N);
      const last = receiver.lastAt;
      withHooksRate = (N / (completed - t0)) * 1000;
      eventRate = (N / (last - t0)) * 1000;
      lagMs = Math.max(0, last - completed);
    } finally {
      await server.stop();
    }
    printFigure('send with the endpoint', withHooksRate, { label: 'send alone', value: mailRate }, '/s');
    printFigure('webhook events delivered', eventRate, { label: 'the same send', value: withHooksRate }, '/s', 1);
    printFigure('webhook events delivered', eventRate, { label: 'send alone', value: mailRate }, '/s');
    console.log(
      `last event after status 3     ${(lagMs / 1000).toFixed(1).padStart(9)} s   (target ≤ 10 s ${lagMs <= 10_000 ? 'met' : 'MISSED'})`,
    );
    if (receiver.ids.size !== N) throw new Error(`receiver got ${receiver.ids.size} distinct events of ${N}`);
  } finally {
    await receiver.close();
    await bench.drop();
  }
}

process.on('exit', () => rmSync(DATA, { recursive: true, force: true }));
runWithSink(ENGINES, benchEngine);
