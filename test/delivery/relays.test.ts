import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import { loadConfig, parseSmtpRelays } from '../../src/config.js';
import { trackingLinks } from '../../src/delivery/tracking.js';
import { toTransportError } from '../../src/delivery/transports.js';
import { startJobs } from '../../src/lanes.js';
import { ENGINE, setup, type TestContext } from '../helpers.js';
import { queueSystemMails } from '../messages/queue.helpers.js';
import { SmtpSink } from '../support/smtp-sink.js';
import { startSink, tallyRecipients, type BenchSink } from '../../bench/lib/sink.js';

/** A port nothing listens on: a relay that is down. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** A real logger writing JSON lines into memory. */
function capturingLogger() {
  const lines: Array<Record<string, any>> = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: Fastify({ logger: { level: 'info', stream } }).log, lines };
}

async function rowsOf(t: TestContext) {
  return t.database.db
    .selectFrom('mail_messages')
    .select(['id', 'email', 'state', 'attempts', 'relay', 'last_error'])
    .orderBy('id')
    .execute();
}

describe('SMTP_URL with several relays', () => {
  it('parses each relay with its rate and pool, removes them from the URL, and names it host:port', () => {
    const relays = parseSmtpRelays(
      'smtp://u:p%40ss@a.example:2525?rate=14&pool=3, smtps://b.example?rate=0.5&tls.rejectUnauthorized=false,smtp://a.example:2525',
    );
    assert.deepEqual(relays, [
      { name: 'a.example:2525', url: 'smtp://u:p%40ss@a.example:2525', rate: 14, pool: 3 },
      { name: 'b.example:465', url: 'smtps://b.example?tls.rejectUnauthorized=false', rate: 0.5, pool: null },
      { name: 'a.example:2525#2', url: 'smtp://a.example:2525', rate: null, pool: null },
    ]);
    assert.deepEqual(parseSmtpRelays('smtp://127.0.0.1:25'), [
      { name: '127.0.0.1:25', url: 'smtp://127.0.0.1:25', rate: null, pool: null },
    ]);
  });

  it('refuses bad values at start with the relay and the value, never the password', () => {
    const bad: Array<[string, RegExp]> = [
      [
        'smtp://u:secret@a.example?rate=fast',
        /SMTP_URL: relay 1 \(a\.example\): rate must be a positive number of messages per second, got "fast"/,
      ],
      ['smtp://a.example,smtp://b.example?rate=0', /relay 2 \(b\.example\): rate must be a positive number/],
      ['smtp://a.example?rate=-3', /rate must be a positive number/],
      ['smtp://a.example?pool=2.5', /relay 1 \(a\.example\): pool must be a whole number of connections from 1 to 1000, got "2.5"/],
      ['smtp://a.example?pool=0', /pool must be a whole number/],
      ['http://a.example', /relay 1 \(a\.example\) must start with smtp:\/\/ or smtps:\/\//],
      ['smtp://a.example,not a url', /relay 2 is not a URL/],
    ];
    for (const [url, message] of bad) {
      assert.throws(
        () => loadConfig({ SMTP_URL: url, APP_SECRET: 'x' }),
        (err: Error) => {
          assert.match(err.message, message);
          assert.doesNotMatch(err.message, /secret/);
          return true;
        },
      );
    }
  });

  it('tells throttling and unreachable relays from failures of the message', () => {
    const busy = (e: object) => toTransportError(Object.assign(new Error('x'), e)).relayBusy;
    assert.equal(busy({ responseCode: 421, response: '421 Try again later' }), 'throttled');
    assert.equal(busy({ responseCode: 454, response: '454 Try again later' }), 'throttled');
    assert.equal(busy({ responseCode: 451, response: '451 4.7.1 Rate limit exceeded' }), 'throttled');
    assert.equal(busy({ code: 'ESOCKET', originalCode: 'ECONNREFUSED', command: 'CONN' }), 'down');
    assert.equal(busy({ code: 'ETIMEDOUT', timeoutType: 'GREETING_TIMEOUT' }), 'down');
    // A mailbox's own temporary failure, a dropped connection (the relay may have the message), a bounce.
    assert.equal(busy({ responseCode: 451, response: '451 4.2.2 Mailbox full' }), null);
    assert.equal(busy({ code: 'ECONNECTION', command: 'CONN', message: 'Connection closed unexpectedly' }), null);
    assert.equal(busy({ responseCode: 550, response: '550 5.7.1 Refused' }), null);
  });
});

describe('sending through several relays', () => {
  let steady: SmtpSink;
  let throttling: SmtpSink;
  let t: TestContext;
  const { log, lines } = capturingLogger();

  before(async () => {
    steady = await SmtpSink.start();
    throttling = await SmtpSink.start();
    const down = await closedPort();
    t = await setup({ smtpUrl: `${steady.url}?pool=2,${throttling.url}?pool=2,smtp://127.0.0.1:${down}?pool=1` });
  });
  after(async () => {
    await t.close();
    await Promise.all([steady.close(), throttling.close()]);
  });

  it('one relay throttling for a while and one down: every message arrives once, none counted as a bounce', async () => {
    const userId = (await t.database.db.selectFrom('accounts').select('id').orderBy('id').executeTakeFirstOrThrow()).id;
    throttling.reject(/./, 421);
    steady.delayMs = 40;
    const emails = await queueSystemMails(t.database.db, userId, 60, new Date(), 'spread');
    const worker = startJobs({ ...t.app.deps, log }, { lanes: ['scheduler', 'mail'], pollMs: 50 });
    try {
      // The throttling relay takes mail again once it was paused: after its pause it is resumed
      // and shares the rest (the steady relay is slow enough for the run to outlast the pause).
      for (const end = Date.now() + 20_000; !lines.some((l) => l.msg === 'relay paused' && l.reason === 'throttled') && Date.now() < end;)
        await new Promise((r) => setTimeout(r, 10));
      throttling.acceptAll();
      await new Promise((r) => setTimeout(r, 10));
      const all = () => steady.messages.length + throttling.messages.length;
      for (const end = Date.now() + 30_000; all() < 60 && Date.now() < end;) await new Promise((r) => setTimeout(r, 50));
    } finally {
      await worker.stop();
    }
    const received = [...steady.messages, ...throttling.messages].flatMap((m) => m.envelope.to).sort();
    assert.deepEqual(received, [...emails].sort(), 'each message once');
    const rows = await rowsOf(t);
    assert.deepEqual(
      rows.map((r) => [r.state, r.attempts]),
      rows.map(() => ['sent', 0]),
      'all sent, no attempt used up',
    );
    const names = new Set(rows.map((r) => r.relay));
    assert.ok(names.has(`127.0.0.1:${steady.port}`), 'the relay is recorded on the message');
    assert.ok(!names.has(null));
    const paused = lines.filter((l) => l.msg === 'relay paused');
    assert.ok(paused.some((l) => l.relay.endsWith(`:${throttling.port}`) && l.reason === 'throttled' && l.pauseMs >= 1000));
    assert.ok(paused.some((l) => l.reason === 'down'));
    assert.ok(throttling.messages.length > 0, 'the throttling relay took mail again');
    assert.ok(lines.some((l) => l.msg === 'relay resumed' && l.relay.endsWith(`:${throttling.port}`)));

    const text = (await t.anon.get('/metrics')).text;
    assert.match(text, new RegExp(`^relay_messages_sent_total\\{relay="127.0.0.1:${steady.port}"\\} \\d+$`, 'm'));
    assert.match(
      text,
      new RegExp(`^relay_messages_deferred_total\\{relay="127.0.0.1:${throttling.port}",reason="throttled"\\} \\d+$`, 'm'),
    );
    assert.match(text, /^relay_pauses_total\{relay="127.0.0.1:\d+"\} \d+$/m);
    assert.match(text, /^relay_paused\{relay="127.0.0.1:\d+"\} [01]$/m);
    assert.doesNotMatch(text, /^mail_messages_bounced_total\{[^}]*\} [1-9]/m);
  });
});

describe('every relay throttling', () => {
  let sink: SmtpSink;
  let t: TestContext;

  before(async () => {
    sink = await SmtpSink.start();
    t = await setup({ smtpUrl: sink.url });
  });
  after(async () => {
    await t.close();
    await sink.close();
  });

  it('puts the messages back in the queue until the pause ends, without counting an attempt', async () => {
    const userId = (await t.database.db.selectFrom('accounts').select('id').orderBy('id').executeTakeFirstOrThrow()).id;
    sink.reject(/./, 421);
    await queueSystemMails(t.database.db, userId, 5, new Date(), 'wait');
    const worker = startJobs(t.app.deps, { lanes: ['scheduler', 'mail'], loop: false });
    try {
      assert.equal(await worker.tick(), 5);
    } finally {
      await worker.stop();
    }
    const rows = await t.database.db.selectFrom('mail_messages').selectAll().execute();
    for (const r of rows) {
      assert.equal(r.state, 'queued');
      assert.equal(r.attempts, 0);
      assert.match(r.last_error ?? '', /every relay is paused.*421/);
      const wait = new Date(r.next_attempt_at).getTime() - Date.now();
      assert.ok(wait > 0 && wait <= 1000, `due when the 1 s pause ends (${wait} ms)`);
    }
    const relay = await t.database.db.selectFrom('relays').selectAll().executeTakeFirstOrThrow();
    assert.equal(Number(relay.pause_ms), 1000);
  });
});

describe('a relay rate shared through the database', () => {
  const RATE = 20;
  let sink: BenchSink;
  let t: TestContext;

  before(async () => {
    // The sink runs in its own process, so its arrival times are not those of this busy one.
    sink = await startSink();
    t = await setup({ smtpUrl: `${sink.url}?rate=${RATE}` });
  });
  after(async () => {
    await t.close();
    await sink.stop();
  });

  it(`${ENGINE === 'postgres' ? 'two workers together' : 'the worker'} never exceed ${RATE} messages per second at the relay`, async () => {
    const userId = (await t.database.db.selectFrom('accounts').select('id').orderBy('id').executeTakeFirstOrThrow()).id;
    const count = 70;
    const emails = await queueSystemMails(t.database.db, userId, count, new Date(), 'rate');
    const workers = Array.from({ length: ENGINE === 'postgres' ? 2 : 1 }, () =>
      startJobs(t.app.deps, { lanes: ['scheduler', 'mail'], mail: { batchSize: 20 }, pollMs: 50 }),
    );
    try {
      for (const end = Date.now() + 20_000; (await sink.total()).messages < count && Date.now() < end;)
        await new Promise((r) => setTimeout(r, 100));
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
    const arrivals = await sink.arrivals();
    const most = (windowMs: number) => {
      let best = 0;
      for (let i = 0, j = 0; i < arrivals.length; i++) {
        while (arrivals[i] - arrivals[j] > windowMs) j++;
        best = Math.max(best, i - j + 1);
      }
      return best;
    };
    const measured = (arrivals.length - 1) / ((arrivals[arrivals.length - 1] - arrivals[0]) / 1000);
    assert.deepEqual(tallyRecipients(await sink.counts(), emails), { missed: 0, duplicated: 0, unexpected: 0 });
    assert.ok(most(1000) <= RATE + 1, `at most ${RATE + 1} in any second: ${most(1000)}`);
    assert.ok(most(3000) <= 3 * RATE + 1, `at most ${3 * RATE + 1} in any 3 s: ${most(3000)}`);
    // The turns are the rate's own (not 0.9 of it): the messages, with the turns used up by
    // messages that reached the relay late (on a loaded machine), fill it.
    const late =
      (await t.app.deps.metrics.getSingleMetric('relay_late_messages_total')?.get())?.values.reduce((n, v) => n + v.value, 0) ?? 0;
    const seconds = (arrivals[arrivals.length - 1] - arrivals[0]) / 1000;
    assert.ok(
      (arrivals.length - 1 + late) / seconds > RATE * 0.95,
      `the rate is used: ${measured.toFixed(1)}/s sent, and ${(late / seconds).toFixed(1)}/s of turns used up by late messages`,
    );
  });
});

describe('VERP envelope sender', () => {
  let sink: SmtpSink;
  let t: TestContext;

  before(async () => {
    sink = await SmtpSink.start();
    t = await setup({ smtpUrl: sink.url, bounceAddress: 'bounces@mail.example.com' });
  });
  after(async () => {
    await t.close();
    await sink.close();
  });

  it('is bounces+<token>@domain in MAIL FROM, the From header unchanged', async () => {
    const userId = (await t.database.db.selectFrom('accounts').select('id').orderBy('id').executeTakeFirstOrThrow()).id;
    await queueSystemMails(t.database.db, userId, 2, new Date(), 'verp');
    const worker = startJobs(t.app.deps, { lanes: ['scheduler', 'mail'], loop: false });
    try {
      await worker.tick();
    } finally {
      await worker.stop();
    }
    const links = trackingLinks(t.config);
    for (const row of await rowsOf(t)) {
      const [m] = sink.to(row.email);
      assert.equal(m.envelope.from, links.verpAddress(row.id));
      assert.match(m.envelope.from, /^bounces\+[0-9a-z]+-[0-9a-f]{16}@mail\.example\.com$/);
      assert.equal(links.readVerpAddress(m.envelope.from), row.id);
      assert.match(m.header('from') ?? '', /no-reply@localhost/);
    }
  });
});
