/**
 * `npm run bench:chaos`: rounds of a single send to 20,000 contacts through the real server (the
 * queue worker in its process), killed with SIGKILL at a random moment of the send and started
 * again, until the send shows status 3. The SMTP sink (its own process) counts the messages each
 * address received; each round prints the addresses missed (target 0) and the extra copies
 * (target ≤ the worker's in-flight window, which the server prints at start). See bench/README.md.
 * Knobs (env): BENCH_ROUNDS (20), BENCH_RECIPIENTS (20000), BENCH_ENGINES (postgres; sqlite too:
 * `sqlite,postgres`), BENCH_VERBOSE=1.
 */
import { isoMicros } from '../src/util/time.js';
import { benchDatabase, seedAccount, seedContacts, type Engine } from './lib/db.js';
import { fmt } from './lib/measure.js';
import {
  createSend,
  SEND_APP_SECRET,
  SEND_PUBLIC_URL,
  seedSenderAndGroup,
  seededEmails,
  sendDetails,
  sendForm,
  waitCompleted,
} from './lib/sends.js';
import { startServer, type BenchServer } from './lib/server.js';
import { runWithSink, tallyRecipients, type BenchSink } from './lib/sink.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const N = Number(process.env.BENCH_RECIPIENTS ?? 20_000);
const ENGINES = (process.env.BENCH_ENGINES ?? 'postgres').split(',') as Engine[];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The in-flight window the server's worker printed at start. */
function windowOf(server: BenchServer): number {
  const m = /BENCH_WORKER (\{.*\})/.exec(server.startOutput);
  if (!m) throw new Error(`the server did not print its worker's in-flight window:\n${server.startOutput}`);
  return (JSON.parse(m[1]) as { inFlightWindow: number }).inFlightWindow;
}

async function chaosEngine(engine: Engine, sink: BenchSink): Promise<void> {
  console.log(`\n== ${engine}: ${ROUNDS} rounds of a send to ${fmt(N)} contacts, SIGKILL at a random moment, restart until status 3`);
  const bench = await benchDatabase(engine);
  const start = () =>
    startServer({
      env: { DATABASE_URL: bench.url, SMTP_URL: sink.url, BENCH_WORKER: '1', APP_SECRET: SEND_APP_SECRET, PUBLIC_URL: SEND_PUBLIC_URL },
    });
  try {
    const { user_id, headers } = await seedAccount(bench.db);
    const { typeIds } = await seedContacts(bench.db, user_id, N, { types: 1 });
    const base = await seedSenderAndGroup(bench.db, user_id);
    const expected = seededEmails(0, N);
    const totals = { missed: 0, duplicated: 0, unexpected: 0, overWindow: 0 };
    let window = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      await sink.reset();
      // The moment: after a random share (0–95%) of the messages reached the sink; 0 kills as soon
      // as the create answered (the recipients may not be queued yet).
      const killAt = Math.floor(Math.random() * 0.95 * N);
      const t0 = performance.now();
      let server = await start();
      window = windowOf(server);
      const utr = await createSend(server.url, headers, sendForm(base, typeIds[0], `Chaos round ${round}`));
      let atKill = 0;
      for (;;) {
        atKill = (await sink.total()).messages;
        if (atKill >= killAt) break;
        await sleep(10);
      }
      server.child.kill('SIGKILL');
      await new Promise((r) =>
        server.child.exitCode !== null || server.child.signalCode !== null ? r(null) : server.child.once('exit', r),
      );
      const sendId = (await bench.db.selectFrom('single_sends').select('id').where('utr', '=', utr).executeTakeFirstOrThrow()).id;
      const held = await bench.db
        .selectFrom('mail_messages')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('single_send_id', '=', sendId)
        .where('state', '=', 'sending')
        .executeTakeFirstOrThrow();
      // The dead worker's leases would end within a minute (then the rows are due again); the
      // bench moves that end to now instead of waiting.
      await bench.db
        .updateTable('mail_messages')
        .set({ next_attempt_at: isoMicros(new Date()) })
        .where('single_send_id', '=', sendId)
        .where('state', '=', 'sending')
        .execute();
      server = await start();
      try {
        await waitCompleted(server.url, headers, utr, sink, 0);
        const d = await sendDetails(server.url, headers, utr);
        const t = tallyRecipients(await sink.counts(), expected);
        const over = t.duplicated > window;
        totals.missed += t.missed;
        totals.duplicated += t.duplicated;
        totals.unexpected += t.unexpected;
        if (over) totals.overWindow++;
        console.log(
          `round ${String(round).padStart(2)}: killed at ${fmt(atKill).padStart(6)} received, ${String(Number(held.n)).padStart(3)} leased;` +
            ` missed ${t.missed}, duplicated ${t.duplicated}${over ? ' (OVER the window)' : ''}, unexpected ${t.unexpected};` +
            ` delivered ${d.delivered}/${d.triggered}; ${((performance.now() - t0) / 1000).toFixed(1)} s`,
        );
      } finally {
        await server.stop();
      }
    }
    console.log(
      `total ${engine}: missed ${totals.missed} (target 0 ${totals.missed === 0 ? 'met' : 'MISSED'}), duplicated ${totals.duplicated} over ${ROUNDS} rounds` +
        ` (in-flight window ${window} per kill; rounds over it: ${totals.overWindow}, target 0 ${totals.overWindow === 0 ? 'met' : 'MISSED'}), unexpected ${totals.unexpected}`,
    );
  } finally {
    await bench.drop();
  }
}

runWithSink(ENGINES, chaosEngine);
