import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { drainQueue, ENGINE, kindsRendering, setupWithSink, type TestContext } from '../helpers.js';
import type { SmtpSink } from '../support/smtp-sink.js';
import { testClock } from '../../src/util/clock.js';
import { enqueueSystemMail } from '../../src/modules/notifications/notifications.mail.js';
import { markSent } from '../../src/messages/messages.writes.js';
import { BACKOFF_MS, MAIL_QUEUE, MAX_ATTEMPTS } from '../../src/messages/mail.queue.js';
import { claim } from '../../src/jobs/queue/claim.js';
import type { QueuedMessage } from '../../src/db/types.js';
import { inFlightWindow } from '../../src/messages/mail.lane.js';
import { startJobs } from '../../src/lanes.js';
import { MAIL_KINDS } from '../../src/mail-kinds.js';
import type { Transport } from '../../src/delivery/transport.js';
import { isoMicros } from '../../src/util/time.js';
import { insertSingleSend, queueSendMessage, queueSystemMails, rowOf, systemMail } from './queue.helpers.js';

/** The lanes of a runner that sends mail: the scheduler and the mail lane. */
const MAIL = ['scheduler', 'mail'] as const;

describe('mail queue: one worker against a real SMTP server', () => {
  const clock = testClock('2030-01-01T00:00:00.000Z');
  let t: TestContext;
  let sink: SmtpSink;
  let userId: number;
  let seq = 0;
  const address = (tag: string) => `${tag}.${++seq}@example.com`;
  const queue = (to: string, at = clock.now()) => enqueueSystemMail(t.database.db, userId, systemMail(to), at);

  before(async () => {
    ({ sink, ...t } = await setupWithSink({}, { clock }));
    userId = t.a.keys!.user_id;
  });
  after(() => t.close());

  it('sends each due message once and marks it sent with its Message-ID and the time; a later one waits for its time', async () => {
    const now = clock.now();
    const to = [address('due'), address('due'), address('due')];
    for (const x of to) await queue(x);
    const later = address('later');
    await queue(later, new Date(now.getTime() + 60_000));
    assert.equal(await drainQueue(t), 3);
    for (const x of to) {
      const [m] = sink.to(x);
      assert.ok(m, `${x} received its mail`);
      assert.equal(sink.to(x).length, 1);
      const row = await rowOf(t.database.db, x);
      assert.equal(row.state, 'sent');
      assert.equal(`<${row.message_id}>`, m.header('message-id'));
      assert.equal(row.sent_at, isoMicros(now));
      assert.equal(row.lease_owner, null);
      assert.equal(row.attempts, 0);
    }
    assert.equal(sink.to(later).length, 0, 'not before its time');
    assert.equal(await drainQueue(t), 0);
    clock.advance(60_000);
    assert.equal(await drainQueue(t), 1);
    assert.equal(sink.to(later).length, 1);
  });

  it('counts delivered and bounced messages on their single send, in the transaction of the marks', async () => {
    const sendId = await insertSingleSend(t.database.db, userId);
    const ok1 = address('ok');
    const ok2 = address('ok');
    const bad = address('bad');
    for (const x of [ok1, ok2, bad]) await queueSendMessage(t.database.db, userId, sendId, x, clock.now());
    sink.reject(bad, 550);
    const kinds = kindsRendering('single_send', async (_deps, rows) => rows.map((r) => ({ message: systemMail(r.email, 'Send') })));
    assert.equal(await drainQueue(t, { kinds }), 3);
    const send = await t.database.db
      .selectFrom('single_sends')
      .select(['delivered', 'bounces'])
      .where('id', '=', sendId)
      .executeTakeFirstOrThrow();
    assert.deepEqual(send, { delivered: 2, bounces: 1 });
    sink.acceptAll();
  });

  it('retries a 4xx reply after 1 min, 5 min, 30 min and 2 h, then counts it bounced without suppressing the address', async () => {
    const x = address('busy');
    sink.reject(x, 451);
    await queue(x);
    assert.equal(await drainQueue(t), 1);
    for (let failures = 1; failures < MAX_ATTEMPTS; failures++) {
      const row = await rowOf(t.database.db, x);
      assert.equal(row.state, 'queued');
      assert.equal(row.attempts, failures);
      assert.equal(row.next_attempt_at, isoMicros(new Date(clock.now().getTime() + BACKOFF_MS[failures - 1])));
      assert.match(row.last_error ?? '', /Try again later/);
      clock.advance(BACKOFF_MS[failures - 1] - 1);
      assert.equal(await drainQueue(t), 0, 'not before the backoff ends');
      clock.advance(1);
      assert.equal(await drainQueue(t), 1);
    }
    const row = await rowOf(t.database.db, x);
    assert.equal(row.state, 'bounced');
    assert.equal(row.attempts, MAX_ATTEMPTS);
    const suppressed = await t.database.db.selectFrom('suppressions').selectAll().where('email_key', '=', x).execute();
    assert.equal(suppressed.length, 0, 'a temporary failure does not say the address is bad');
    assert.equal(sink.to(x).length, 0);
    sink.acceptAll();
  });

  it('bounces a 5xx at once and never mails the address again from the account (any case); other accounts still can', async () => {
    const x = address('gone');
    sink.reject(x, 550, { text: '5.1.1 Mailbox unavailable: user unknown' });
    await queue(x);
    await drainQueue(t);
    const row = await rowOf(t.database.db, x);
    assert.equal(row.state, 'bounced');
    assert.equal(row.attempts, 1);
    assert.match(row.last_error ?? '', /Mailbox unavailable/);
    const list = await t.database.db.selectFrom('suppressions').select(['user_id', 'email_key']).where('email_key', '=', x).execute();
    assert.deepEqual(list, [{ user_id: userId, email_key: x }]);
    sink.acceptAll();
    await enqueueSystemMail(t.database.db, userId, systemMail(x.toUpperCase()), clock.now());
    await enqueueSystemMail(t.database.db, t.b.keys!.user_id, systemMail(x), clock.now());
    assert.equal(await drainQueue(t), 2);
    const again = await t.database.db
      .selectFrom('mail_messages')
      .select(['state', 'last_error'])
      .where('email', '=', x.toUpperCase())
      .executeTakeFirstOrThrow();
    assert.deepEqual(again, { state: 'suppressed', last_error: 'the address bounced before' });
    assert.equal(sink.to(x).length, 1, 'only the other account mailed it');
  });

  it('retries a dropped connection after its backoff and a 421 (throttling) when the relay pause ends, then delivers', async () => {
    const dropped = address('dropped');
    const closing = address('closing');
    sink.drop(dropped);
    sink.reject(closing, 421);
    await queue(dropped);
    await queue(closing);
    await drainQueue(t);
    const [d, c] = [await rowOf(t.database.db, dropped), await rowOf(t.database.db, closing)];
    assert.deepEqual([d.state, d.attempts], ['queued', 1], 'a dropped connection uses an attempt: the relay may have taken it');
    assert.deepEqual([c.state, c.attempts], ['queued', 0], 'throttling pauses the relay and uses no attempt');
    assert.ok(new Date(c.next_attempt_at) <= new Date(clock.now().getTime() + 1000), 'due when the 1 s pause ends');
    sink.acceptAll();
    // The relay's pause is real time: the test ends it rather than waiting.
    await t.database.db.updateTable('relays').set({ paused_until: 0 }).execute();
    clock.advance(BACKOFF_MS[0]);
    assert.equal(await drainQueue(t), 2);
    for (const x of [dropped, closing]) {
      assert.equal((await rowOf(t.database.db, x)).state, 'sent');
      assert.equal(sink.to(x).length, 1);
    }
  });

  it('gives a message whose lease ran out to another worker; the first one can no longer mark it', async () => {
    const x = address('lease');
    await queue(x);
    const [claimed] = await claim<QueuedMessage>(t.database.db, MAIL_QUEUE, 'dead-worker', clock.now(), 100, 60_000);
    assert.equal(claimed.email, x);
    assert.equal(claimed.state, 'sending');
    assert.equal(await drainQueue(t), 0, 'held by its lease');
    clock.advance(60_000);
    assert.equal(await drainQueue(t), 1);
    const row = await rowOf(t.database.db, x);
    assert.equal(row.state, 'sent');
    assert.equal(await markSent(t.database.db, MAIL_KINDS, 'dead-worker', clock.now(), [{ id: row.id, messageId: 'late@x' }]), 0);
    assert.equal((await rowOf(t.database.db, x)).message_id, row.message_id);
  });

  it('stops gracefully: the message in flight finishes, the rest go back to the queue due at once', async () => {
    const to = Array.from({ length: 6 }, () => address('stop'));
    for (const x of to) await queue(x);
    let firstSend!: () => void;
    const sending = new Promise<void>((r) => (firstSend = r));
    const transport: Transport = {
      ...t.transport,
      send: (m) => {
        firstSend();
        return t.transport.send(m);
      },
    };
    const worker = startJobs({ ...t.app.deps, transport }, { lanes: MAIL, loop: false, mail: { concurrency: 1, flushSize: 1 } });
    const ticking = worker.tick();
    await sending;
    await worker.stop();
    assert.equal(await ticking, 6);
    const rows = await Promise.all(to.map((x) => rowOf(t.database.db, x)));
    assert.deepEqual(rows.map((r) => r.state).sort(), ['queued', 'queued', 'queued', 'queued', 'queued', 'sent']);
    for (const r of rows.filter((r) => r.state === 'queued')) {
      assert.equal(r.lease_owner, null);
      assert.equal(r.next_attempt_at, isoMicros(clock.now()));
    }
    assert.equal(to.filter((x) => sink.to(x).length > 0).length, 1);
    assert.equal(await drainQueue(t), 5);
  });

  it('bounds the wait of a stop: a send that hangs keeps its lease, the unsent are released', async () => {
    const to = [address('hang'), address('hang')];
    for (const x of to) await queue(x);
    const transport: Transport = { ...t.transport, send: () => new Promise(() => undefined) };
    const worker = startJobs({ ...t.app.deps, transport }, { lanes: MAIL, loop: false, mail: { concurrency: 1 }, stopTimeoutMs: 50 });
    void worker.tick();
    await new Promise((r) => setTimeout(r, 100));
    await worker.stop();
    const [hung, waiting] = await Promise.all(to.map((x) => rowOf(t.database.db, x)));
    assert.equal(hung.state, 'sending');
    assert.equal(hung.lease_owner, worker.id);
    assert.equal(waiting.state, 'queued');
    clock.advance(60_000);
    assert.equal(await drainQueue(t), 2, 'the hung one comes back when its lease ends');
  });

  it('keeps what the transport accepted but is not yet marked within the in-flight window', async () => {
    const to = await queueSystemMails(t.database.db, userId, 40, clock.now(), `window${++seq}`);
    const opts = { concurrency: 3, flushSize: 4 };
    const marked = async () =>
      Number(
        (
          await t.database.db
            .selectFrom('mail_messages')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('email', 'in', to)
            .where('state', '=', 'sent')
            .executeTakeFirstOrThrow()
        ).n,
      );
    let handed = 0;
    let worst = 0;
    const transport: Transport = {
      ...t.transport,
      send: async (m) => {
        handed++;
        worst = Math.max(worst, handed - (await marked()));
        return t.transport.send(m);
      },
    };
    const worker = startJobs({ ...t.app.deps, transport }, { lanes: MAIL, loop: false, mail: opts });
    assert.equal(worker.inFlightWindow, inFlightWindow(opts));
    assert.equal(worker.inFlightWindow, 11, 'concurrency + 2 × flushSize');
    while ((await worker.tick()) > 0);
    await worker.stop();
    assert.equal(await marked(), 40);
    assert.ok(worst > 1, `sends overlapped (${worst})`);
    assert.ok(worst <= worker.inFlightWindow, `at most ${worker.inFlightWindow} unmarked, saw ${worst}`);
  });

  it('applies the renderers: skipped rows are settled with the reason, a throwing renderer makes a retry, a bad payload is cancelled', async () => {
    const sendId = await insertSingleSend(t.database.db, userId);
    const skip = address('skip');
    const go = address('go');
    const boom = address('boom');
    for (const x of [skip, go]) await queueSendMessage(t.database.db, userId, sendId, x, clock.now());
    const kinds = kindsRendering('single_send', async (_deps, rows) =>
      rows.map((r) => (r.email === skip ? { skip: 'suppressed' as const, reason: 'unsubscribed' } : { message: systemMail(r.email) })),
    );
    await drainQueue(t, { kinds });
    assert.deepEqual(
      [(await rowOf(t.database.db, skip)).state, (await rowOf(t.database.db, skip)).last_error],
      ['suppressed', 'unsubscribed'],
    );
    assert.equal((await rowOf(t.database.db, go)).state, 'sent');
    await queueSendMessage(t.database.db, userId, sendId, boom, clock.now());
    const throwing = kindsRendering('single_send', async () => Promise.reject(new Error('design broken')));
    await drainQueue(t, { kinds: throwing });
    const b = await rowOf(t.database.db, boom);
    assert.deepEqual([b.state, b.attempts, b.last_error], ['queued', 1, 'rendering failed: design broken']);
    clock.advance(BACKOFF_MS[0]);
    await drainQueue(t);
    // After its backoff the message is rendered by the wired single-send renderer and sent.
    assert.deepEqual([(await rowOf(t.database.db, boom)).state, (await rowOf(t.database.db, boom)).last_error], ['sent', null]);
    const at = isoMicros(clock.now());
    const bad = address('payload');
    await t.database.db
      .insertInto('mail_messages')
      .values({
        user_id: userId,
        kind: 'system',
        email: bad,
        email_key: bad,
        payload: '{not json',
        next_attempt_at: at,
        created_at: at,
        updated_at: at,
      })
      .execute();
    await drainQueue(t);
    const p = await rowOf(t.database.db, bad);
    assert.equal(p.state, 'cancelled');
    assert.match(p.last_error ?? '', /^unreadable system mail payload/);
  });

  it('shows the queue depth by state and the sent, bounced and retried counters on /metrics', async () => {
    await queue(address('depth'));
    await queue(address('depth'), new Date(clock.now().getTime() + 3_600_000));
    const text = (await t.anon.get('/metrics')).text;
    assert.match(text, /^mail_queue_depth\{state="queued"\} 2$/m);
    assert.match(text, /^mail_queue_depth\{state="sending"\} \d+$/m);
    const counter = (name: string) => Number(new RegExp(`^${name}\\{kind="system"\\} (\\d+)$`, 'm').exec(text)?.[1]);
    assert.ok(counter('mail_messages_sent_total') >= 10, text);
    assert.equal(
      counter('mail_messages_retried_total'),
      MAX_ATTEMPTS - 1 + 1,
      'the 4xx retries and the dropped connection (the 421 paused its relay)',
    );
    assert.match(text, /^relay_messages_deferred_total\{relay="127\.0\.0\.1:\d+",reason="throttled"\} 1$/m);
    assert.ok(counter('mail_messages_bounced_total') >= 2, text);
    await drainQueue(t);
    assert.match((await t.anon.get('/metrics')).text, /^mail_queue_depth\{state="queued"\} 1$/m);
  });

  it(`wakes an idle worker when mail is queued (${ENGINE === 'postgres' ? 'a NOTIFY through the listener' : 'polling'})`, async () => {
    const listener = t.database.listener;
    for (let i = 0; i < 100 && listener && !listener.isListening(); i++) await new Promise((r) => setTimeout(r, 20));
    // On PostgreSQL no poll could find the mail in time: only the notification wakes the worker.
    const worker = startJobs(t.app.deps, {
      lanes: MAIL,
      ...(ENGINE === 'postgres' ? { pollMs: 60_000, idleMaxMs: 60_000 } : { pollMs: 50 }),
    });
    try {
      await new Promise((r) => setTimeout(r, 150));
      const x = address('wake');
      await queue(x);
      await sink.waitFor((m) => m.envelope.to.includes(x), 5000);
    } finally {
      await worker.stop();
    }
  });
});
