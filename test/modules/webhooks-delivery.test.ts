import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setup, type TestContext } from '../helpers.js';
import { testClock, type TestClock } from '../../src/util/clock.js';
import { startJobs, type Jobs } from '../../src/lanes.js';
import type { WebhookLaneOptions } from '../../src/jobs/webhook.lane.js';
import { RETRY_SCHEDULE_MS } from '../../src/jobs/webhook.queue.js';
import { assertSigned, createEndpoint, emit, Receiver } from './webhooks.helpers.js';

const DAY = 24 * 3_600_000;

describe('webhook delivery', () => {
  let t: TestContext;
  let clock: TestClock;
  let receiver: Receiver;
  let worker: Jobs;
  let userA: number;

  before(async () => {
    clock = testClock(new Date());
    t = await setup({ webhooksAllowPrivate: true }, { clock });
    userA = t.a.keys!.user_id;
  });
  after(() => t.close());
  beforeEach(async () => {
    receiver = await Receiver.start();
    worker = startWebhooks();
    // Each test starts with no endpoint and no event of account A.
    await t.database.db.deleteFrom('webhook_endpoints').execute();
    await t.database.db.deleteFrom('webhook_events').execute();
  });
  afterEach(async () => {
    await worker.stop();
    await receiver.close();
  });

  /** A job runner with the webhook lane only, driven by hand. */
  const startWebhooks = (webhooks: WebhookLaneOptions = {}) => startJobs(t.app.deps, { lanes: ['webhooks'], webhooks, loop: false });
  /** Ticks until a tick claims nothing; returns how many deliveries were claimed. */
  const drain = async (w: Jobs = worker) => {
    let total = 0;
    for (let n = await w.tick(); n > 0; n = await w.tick()) total += n;
    return total;
  };
  const log = async (endpointId: number) => {
    const r = await t.a.get('/webhooks/deliveries', { endpoint_id: endpointId });
    assert.equal(r.status, 200, r.text);
    return r.body.message.deliveries as Array<Record<string, any>>;
  };
  const state = async (endpointId: number) =>
    (
      await t.database.db.selectFrom('webhook_deliveries').select(['state', 'attempts']).where('endpoint_id', '=', endpointId).execute()
    ).map((d) => `${d.state}/${d.attempts}`);

  it('delivers each event, signed, to every endpoint of the account that takes it', async () => {
    const all = await createEndpoint(t.a, receiver.url('/all'));
    const opens = await createEndpoint(t.a, receiver.url('/opens'), ['message.opened']);
    const other = await createEndpoint(t.b, receiver.url('/b'));
    await emit(t.database, userA, 3, clock.now());
    await emit(t.database, userA, 1, clock.now(), 'message.opened');
    assert.equal(await drain(), 5);

    const at = (path: string) => receiver.received.filter((r) => r.path === path);
    assert.equal(at('/all').length, 4);
    assert.equal(at('/opens').length, 1);
    assert.equal(at('/b').length, 0);
    for (const r of at('/all')) assertSigned(r, all.secret);
    assertSigned(at('/opens')[0], opens.secret);
    assert.throws(() => assertSigned(at('/opens')[0], other.secret));
    const first = at('/all')[0];
    assert.equal(first.headers['content-type'], 'application/json');
    assert.match(String(first.headers['webhook-id']), /^evt_/);
    const body = JSON.parse(first.body);
    assert.deepEqual(Object.keys(body), ['type', 'timestamp', 'data']);
    assert.equal(body.type, 'message.delivered');
    assert.equal(body.timestamp, clock.now().toISOString());
    assert.deepEqual(Object.keys(body.data), ['source', 'utr', 'email', 'contact_id', 'message_id']);

    const entries = await log(all.id);
    assert.equal(entries.length, 4);
    assert.deepEqual(
      entries.map((e) => e.event_type),
      ['message.opened', 'message.delivered', 'message.delivered', 'message.delivered'],
    );
    assert.deepEqual(
      { ...entries[0], duration_ms: 0 },
      {
        event_id: at('/all')[3].headers['webhook-id'],
        event_type: 'message.opened',
        attempt: 1,
        status_code: 200,
        error: null,
        duration_ms: 0,
        created_at: entries[0].created_at,
        next_attempt_at: null,
      },
    );
    assert.deepEqual(await state(all.id), ['delivered/1', 'delivered/1', 'delivered/1', 'delivered/1']);
    assert.equal(await drain(), 0);
  });

  it('retries a failing delivery with the same webhook-id on the schedule, logs each attempt, then gives up', async () => {
    receiver.status = 500;
    const e = await createEndpoint(t.a, receiver.url());
    await emit(t.database, userA, 1, clock.now());
    assert.equal(await drain(), 1);
    for (const wait of RETRY_SCHEDULE_MS) {
      clock.advance(wait - 1);
      assert.equal(await drain(), 0, `not due before ${wait} ms`);
      clock.advance(1);
      assert.equal(await drain(), 1, `due after ${wait} ms`);
    }
    clock.advance(DAY);
    assert.equal(await drain(), 0);
    assert.equal(receiver.received.length, RETRY_SCHEDULE_MS.length + 1);
    assert.equal(receiver.ids().size, 1);
    for (const r of receiver.received) assertSigned(r, e.secret);
    assert.deepEqual(await state(e.id), ['failed/8']);
    const entries = (await log(e.id)).reverse();
    assert.deepEqual(
      entries.map((x) => [x.attempt, x.status_code, x.error]),
      entries.map((_, i) => [i + 1, 500, 'HTTP 500: ok']),
    );
    // Each entry says when the next attempt runs: the schedule's wait after it; none after the last.
    entries.forEach((x, i) => {
      const wait = RETRY_SCHEDULE_MS[i];
      assert.equal(x.next_attempt_at && Date.parse(x.next_attempt_at) - Date.parse(x.created_at), wait ?? null);
    });
  });

  it('recovers: the failing state is set at the first failure and cleared by a success', async () => {
    let calls = 0;
    receiver.answer = () => ({ status: ++calls <= 2 ? 503 : 204 });
    const e = await createEndpoint(t.a, receiver.url());
    await emit(t.database, userA, 1, clock.now());
    const failingSince = async () =>
      (await t.database.db.selectFrom('webhook_endpoints').select('failing_since').where('id', '=', e.id).executeTakeFirstOrThrow())
        .failing_since;
    await drain();
    const since = await failingSince();
    assert.ok(since);
    clock.advance(RETRY_SCHEDULE_MS[0]);
    await drain();
    assert.equal(await failingSince(), since);
    clock.advance(RETRY_SCHEDULE_MS[1]);
    await drain();
    assert.equal(await failingSince(), null);
    assert.deepEqual(await state(e.id), ['delivered/3']);
    assert.deepEqual(
      (await log(e.id)).map((x) => x.status_code),
      [204, 503, 503],
    );
  });

  it('disables an endpoint that failed every attempt for 5 days and mails the notification recipients', async () => {
    receiver.status = 500;
    const r = await t.a.post('/notification-recipient/save', { email_address: 'ops@example.com', email_owner: 'Ops' });
    assert.equal(r.status, 200, r.text);
    const e = await createEndpoint(t.a, receiver.url());
    await emit(t.database, userA, 1, clock.now());
    await drain();
    clock.advance(5 * DAY - 1);
    await emit(t.database, userA, 2, clock.now());
    await drain();
    const endpoint = async () => (await t.a.get('/webhooks/endpoints')).body.message.endpoints[0];
    assert.equal((await endpoint()).enabled, 1, 'still enabled just before 5 days');
    clock.advance(1);
    await emit(t.database, userA, 1, clock.now());
    await drain();
    assert.equal((await endpoint()).enabled, 0);
    assert.notEqual((await endpoint()).failing_since, null);
    assert.ok(
      (await state(e.id)).every((s) => s.startsWith('failed/')),
      'nothing left to send',
    );
    const mails = await t.database.db
      .selectFrom('mail_messages')
      .select(['email', 'payload'])
      .where('kind', '=', 'system')
      .where('email', '=', 'ops@example.com')
      .execute();
    assert.equal(mails.length, 1);
    const mail = JSON.parse(mails[0].payload!);
    assert.equal(mail.subject, '[Campaign API] Webhook endpoint disabled');
    assert.match(mail.text, new RegExp(`${receiver.url().replace(/[.]/g, '\\.')} \\(id ${e.id}\\)`));
    // Disabled: nothing more is sent, and re-enabling clears the failing state.
    const sent = receiver.received.length;
    clock.advance(DAY);
    await drain();
    assert.equal(receiver.received.length, sent);
    await t.a.post('/webhooks/endpoints/update', { id: e.id, enabled: 1 });
    assert.deepEqual([(await endpoint()).enabled, (await endpoint()).failing_since], [1, null]);
  });

  it('sends an event again on retry, with the same webhook-id, whether it was delivered or failed', async () => {
    const e = await createEndpoint(t.a, receiver.url());
    await emit(t.database, userA, 1, clock.now());
    await drain();
    const id = String(receiver.received[0].headers['webhook-id']);
    assert.equal((await t.a.post('/webhooks/deliveries/retry', { endpoint_id: e.id, event_id: id })).status, 200);
    assert.equal(await drain(), 1);
    assert.deepEqual([...receiver.ids()], [id]);
    assert.equal(receiver.received.length, 2);
    assert.deepEqual(
      (await log(e.id)).map((x) => [x.attempt, x.status_code]),
      [
        [2, 200],
        [1, 200],
      ],
    );
    await t.database.db.updateTable('webhook_deliveries').set({ state: 'failed', attempts: 8 }).execute();
    receiver.status = 500;
    await t.a.post('/webhooks/deliveries/retry', { endpoint_id: e.id, event_id: id });
    assert.equal(await drain(), 1);
    assert.deepEqual(await state(e.id), ['failed/9'], 'a failed retry of a used-up delivery fails again');
  });

  it('signs with the new secret only after a rotation', async () => {
    const e = await createEndpoint(t.a, receiver.url());
    const rotated = (await t.a.post('/webhooks/endpoints/rotate-secret', { id: e.id })).body.message.secret;
    await emit(t.database, userA, 1, clock.now());
    await drain();
    assertSigned(receiver.received[0], rotated);
    assert.throws(() => assertSigned(receiver.received[0], e.secret));
  });

  it('sends nothing for a deleted endpoint', async () => {
    const e = await createEndpoint(t.a, receiver.url());
    await emit(t.database, userA, 2, clock.now());
    await t.a.delete('/webhooks/endpoints/delete', { id: e.id });
    assert.equal(await drain(), 0);
    assert.equal(receiver.received.length, 0);
  });

  for (const host of ['127.0.0.1', 'localhost']) {
    it(`refuses at delivery a private address (${host}) when the worker does not allow it`, async () => {
      const e = await createEndpoint(t.a, `http://${host}:${receiver.port}/hook`);
      await emit(t.database, userA, 1, clock.now());
      const strict = startWebhooks({ allowPrivate: false });
      try {
        assert.equal(await drain(strict), 1);
      } finally {
        await strict.stop();
      }
      assert.equal(receiver.received.length, 0);
      const [entry] = await log(e.id);
      assert.equal(entry.status_code, null);
      assert.match(entry.error, new RegExp(`^refused: ${host} resolves to (127\\.0\\.0\\.1|::1), which is not a public address$`));
      assert.deepEqual(await state(e.id), ['pending/1']);
    });
  }

  it('does not follow a redirect, even to an address it could reach', async () => {
    const target = await Receiver.start();
    try {
      receiver.answer = () => ({ status: 302, headers: { location: target.url() } });
      const e = await createEndpoint(t.a, receiver.url());
      await emit(t.database, userA, 1, clock.now());
      await drain();
      assert.equal(receiver.received.length, 1);
      assert.equal(target.received.length, 0);
      const [entry] = await log(e.id);
      assert.deepEqual([entry.status_code, entry.error], [302, 'HTTP 302 (redirects are not followed): ok']);
    } finally {
      await target.close();
    }
  });

  it('gives up an attempt that gets no answer in time', async () => {
    receiver.answer = () => ({ status: 200 });
    const e = await createEndpoint(t.a, receiver.url());
    await emit(t.database, userA, 1, clock.now());
    // A receiver that never answers: a port that accepts and stays silent.
    const { createServer } = await import('node:net');
    const held: import('node:net').Socket[] = [];
    const silent = createServer((socket) => held.push(socket));
    await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
    await t.a.post('/webhooks/endpoints/update', { id: e.id, url: `http://127.0.0.1:${(silent.address() as { port: number }).port}/` });
    const quick = startWebhooks({ timeoutMs: 200 });
    try {
      await drain(quick);
    } finally {
      await quick.stop();
      for (const socket of held) socket.destroy();
      await new Promise((done) => silent.close(done));
    }
    const [entry] = await log(e.id);
    assert.deepEqual([entry.status_code, entry.error], [null, 'no answer within 0.2 s']);
  });

  it('deletes finished events older than 30 days when idle, and keeps unfinished ones', async () => {
    const e = await createEndpoint(t.a, receiver.url());
    await emit(t.database, userA, 3, clock.now());
    await drain();
    await t.a.post('/webhooks/endpoints/update', { id: e.id, enabled: 0 });
    const pending = await createEndpoint(t.a, 'http://127.0.0.1:9/unreached', ['message.opened']);
    await t.a.post('/webhooks/endpoints/update', { id: pending.id, enabled: 1 });
    await emit(t.database, userA, 1, clock.now(), 'message.opened');
    await t.database.db.updateTable('webhook_endpoints').set({ enabled: 0 }).where('id', '=', pending.id).execute();
    const count = async () =>
      Number(
        (
          await t.database.db
            .selectFrom('webhook_events')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    assert.equal(await count(), 4);
    clock.advance(30 * DAY - 1);
    await worker.tick();
    assert.equal(await count(), 4);
    clock.advance(2);
    assert.equal(await worker.tick(), 0);
    assert.equal(await count(), 1, 'the event still pending stays');
    assert.deepEqual(await log(e.id), []);
  });
});
