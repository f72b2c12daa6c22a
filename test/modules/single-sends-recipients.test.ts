import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../helpers.js';
import { completeSends, startDueSends } from '../../src/modules/single-sends/single-sends.engine.js';
import { zonedToUtc } from '../../src/modules/single-sends/single-sends.rules.js';
import {
  createSend,
  details,
  group,
  messagesOf,
  sendForm,
  sendRow,
  setupSends,
  typeWith,
  verifiedSender,
  type SendsContext,
} from './single-sends.helpers.js';

async function segment(c: Client, type: number, operator: string, value: string[]): Promise<number> {
  const r = await c.post('/segment/create', {
    segment_name: 'S',
    contact_type_id: type,
    select_field: ['email'],
    select_operator: [operator],
    value,
  });
  assert.equal(r.status, 200, r.text);
  return r.body.id;
}

async function handAdd(c: Client, segment_id: number, email: string, first_name: string): Promise<void> {
  const r = await c.post('/segment/email/store', { segment_id, first_name, last_name: 'Hand', email });
  assert.equal(r.status, 200, r.text);
}

describe('single sends: who receives a send', () => {
  let t: SendsContext;
  let base: { sender: number; group: number; type: number };
  before(async () => {
    t = await setupSends();
    base = { sender: await verifiedSender(t, t.a), group: await group(t.a), type: 0 };
  });
  after(() => t.close());

  test('targets minus exclusions, unsubscribes (global and the group), bounces and deleted contacts, each address once', async () => {
    const one = await typeWith(t.a, [
      ['ann@example.com', 'Ann'],
      ['Bob@Example.com', 'Bob'],
      ['carol@example.com', 'Carol'],
      ['dave@example.com', 'Dave'],
      ['erin@example.com', 'Erin'],
      ['fay@example.com', 'Fay'],
      ['gus@example.com', 'Gus'],
      ['hal@example.com', 'Hal'],
      ['ivy@example.com', 'Ivy'],
    ]);
    const two = await typeWith(t.a, [
      ['BOB@example.com', 'Robert'],
      ['zed@example.com', 'Zed'],
    ]);
    const [ann, bob, , dave] = one.ids;
    // Segment of the second type: all its contacts, plus two recipients added by hand.
    const seg = await segment(t.a, two.type, 'contains', ['@']);
    await handAdd(t.a, seg, 'hanna@example.com', 'Hanna');
    await handAdd(t.a, seg, 'ANN@example.com', 'Annie');
    // Excluded: a segment of the first type holding ivy, and one hand-added address (zed's).
    const ex = await segment(t.a, one.type, 'is', ['ivy@example.com']);
    await handAdd(t.a, ex, 'Zed@example.com', 'Z');
    const other = await group(t.a, 'Other');
    assert.equal((await t.a.post('/global-unsubscribes/save', { email_address: 'ERIN@example.com' })).status, 200);
    assert.equal(
      (await t.a.post('/unsubscribes-groups/manually-add', { unsubscribe_groups_id: base.group, email_address: 'fay@example.com' })).status,
      200,
    );
    assert.equal(
      (await t.a.post('/unsubscribes-groups/manually-add', { unsubscribe_groups_id: other, email_address: 'gus@example.com' })).status,
      200,
    );
    // Another account's unsubscribe of carol suppresses nothing here.
    assert.equal((await t.b.post('/global-unsubscribes/save', { email_address: 'carol@example.com' })).status, 200);
    await t.database.db
      .insertInto('suppressions')
      .values({
        user_id: t.a.keys!.user_id,
        email_key: 'hal@example.com',
        email: 'hal@example.com',
        reason: 'hard_bounce',
        detail: null,
        created_at: '2030-01-01T00:00:00.000000Z',
      })
      .execute();
    const utr = await createSend(
      t.a,
      sendForm(
        { ...base, type: one.type },
        { recipient_id: [`contacts_${one.type}`, `segments_${seg}`], exclude_specific_recipient_id: [`segments_${ex}`] },
      ),
    );
    assert.equal((await t.a.delete('/contacts/delete', { contact_id: dave })).status, 200);

    assert.equal(await startDueSends(t.deps, t.clock.now()), 1);
    const rows = await messagesOf(t, utr);
    assert.deepEqual(
      rows.map((r) => [r.email_key, r.contact_id, r.payload === null ? null : JSON.parse(r.payload), r.state, r.kind]),
      [
        ['ann@example.com', ann, null, 'queued', 'single_send'],
        ['bob@example.com', bob, null, 'queued', 'single_send'],
        ['carol@example.com', one.ids[2], null, 'queued', 'single_send'],
        ['gus@example.com', one.ids[6], null, 'queued', 'single_send'],
        ['hanna@example.com', null, { first_name: 'Hanna', last_name: 'Hand' }, 'queued', 'single_send'],
      ],
    );
    assert.equal(rows.find((r) => r.email_key === 'bob@example.com')!.email, 'Bob@Example.com');
    assert.ok(rows.every((r) => r.next_attempt_at === '2030-01-15T10:00:00.000000Z'));
    const d = await details(t.a, utr);
    assert.deepEqual([d.status, d.triggered], [2, 5]);
  });

  test('a send with no recipient left completes at the next tick, with triggered 0', async () => {
    const { type } = await typeWith(t.a, [['only@example.com']]);
    await t.a.post('/global-unsubscribes/save', { email_address: 'only@example.com' });
    const utr = await createSend(t.a, sendForm({ ...base, type }));
    await startDueSends(t.deps, t.clock.now());
    await completeSends(t.deps, t.clock.now());
    const d = await details(t.a, utr);
    assert.deepEqual([d.status, d.triggered, d.sent_at], [3, 0, '2030-01-15 10:00:00']);
  });
});

describe('single sends: scheduling on a controllable clock', () => {
  let t: SendsContext;
  let base: { sender: number; group: number; type: number };
  before(async () => {
    t = await setupSends({ start: '2030-01-15T10:00:00.000Z' });
    const { type } = await typeWith(t.a, [['sched@example.com']]);
    base = { sender: await verifiedSender(t, t.a), group: await group(t.a), type };
  });
  after(() => t.close());

  const status = async (utr: string) => (await sendRow(t, utr)).status;

  test('UTC: never before its time, at its time exactly', async () => {
    const utr = await createSend(t.a, sendForm(base, { schedule_type: 1, schedule_date: '2030-01-15', schedule_time: '10:30' }));
    await startDueSends(t.deps, t.clock.now());
    assert.equal(await status(utr), 1);
    t.clock.advance(30 * 60_000 - 1);
    await startDueSends(t.deps, t.clock.now());
    assert.equal(await status(utr), 1);
    assert.equal((await messagesOf(t, utr)).length, 0);
    t.clock.advance(1);
    await startDueSends(t.deps, t.clock.now());
    assert.equal(await status(utr), 2);
    assert.equal((await messagesOf(t, utr)).length, 1);
  });

  test('a named zone: 05:45 in New York in January is 10:45 UTC', async () => {
    t.clock.set('2030-01-15T10:40:00.000Z');
    const utr = await createSend(
      t.a,
      sendForm(base, { schedule_type: 1, schedule_date: '2030-01-15', schedule_time: '05:45', timezone: 'America/New_York' }),
    );
    t.clock.set('2030-01-15T10:44:59.999Z');
    await startDueSends(t.deps, t.clock.now());
    assert.equal(await status(utr), 1);
    t.clock.set('2030-01-15T10:45:00.000Z');
    await startDueSends(t.deps, t.clock.now());
    assert.equal(await status(utr), 2);
  });

  test('a send whose time passed while nothing ran goes out at the next tick', async () => {
    t.clock.set('2030-01-16T00:00:00.000Z');
    const utr = await createSend(t.a, sendForm(base, { schedule_type: 1, schedule_date: '2030-01-16', schedule_time: '01:00' }));
    t.clock.set('2030-01-20T00:00:00.000Z');
    await startDueSends(t.deps, t.clock.now());
    assert.equal(await status(utr), 2);
  });

  test('clocks going forward or back: a skipped time moves on by the gap, a repeated one is its first occurrence', () => {
    assert.equal(zonedToUtc('2030-03-31', '02:30:00', 'Europe/Berlin').toISOString(), '2030-03-31T01:30:00.000Z');
    assert.equal(zonedToUtc('2030-10-27', '02:30:00', 'Europe/Berlin').toISOString(), '2030-10-27T00:30:00.000Z');
    assert.equal(zonedToUtc('2030-07-01', '12:00:00', 'utc').toISOString(), '2030-07-01T12:00:00.000Z');
  });

  test('two workers starting the same due send: one wins, the recipients are queued once', async () => {
    const utr = await createSend(t.a, sendForm(base));
    const started = await Promise.all([startDueSends(t.deps, t.clock.now()), startDueSends(t.deps, t.clock.now())]);
    assert.equal(started[0] + started[1], 1);
    assert.equal((await messagesOf(t, utr)).length, 1);
    assert.equal((await details(t.a, utr)).triggered, 1);
  });

  test('completion: only when no message is left; status 3, sent_at, and a notification queued for each recipient', async () => {
    assert.equal((await t.a.post('/notification-recipient/save', { email_address: 'boss@example.com', email_owner: 'Boss' })).status, 200);
    assert.equal((await t.a.post('/notification-recipient/save', { email_address: 'ops@example.com', email_owner: 'Ops' })).status, 200);
    await completeSends(t.deps, t.clock.now());
    t.clock.set('2030-01-21T08:00:00.000Z');
    const utr = await createSend(t.a, sendForm(base, { single_send_name: 'Notified' }));
    await startDueSends(t.deps, t.clock.now());
    const [row] = await messagesOf(t, utr);
    await completeSends(t.deps, t.clock.now());
    assert.equal(await status(utr), 2, 'a queued message keeps the send running');
    await t.database.db.updateTable('mail_messages').set({ state: 'sending' }).where('id', '=', row.id).execute();
    await completeSends(t.deps, t.clock.now());
    assert.equal(await status(utr), 2, 'a message being sent keeps the send running');
    await t.database.db.updateTable('mail_messages').set({ state: 'sent' }).where('id', '=', row.id).execute();
    t.clock.advance(5_000);
    assert.ok((await completeSends(t.deps, t.clock.now())) >= 1);
    const d = await details(t.a, utr);
    assert.deepEqual([d.status, d.sent_at], [3, '2030-01-21 08:00:05']);
    const notes = await t.database.db
      .selectFrom('mail_messages')
      .selectAll()
      .where('kind', '=', 'system')
      .where('payload', 'like', '%Notified%')
      .orderBy('email')
      .execute();
    assert.deepEqual(
      notes.map((n) => n.email),
      ['boss@example.com', 'ops@example.com'],
    );
    assert.match(JSON.parse(notes[0].payload!).subject, /Single send completed/);
    assert.equal(await completeSends(t.deps, t.clock.now()), 0, 'completed once');
  });

  test('a deleted running send completes without a notification', async () => {
    t.clock.set('2030-01-22T08:00:00.000Z');
    const utr = await createSend(t.a, sendForm(base, { single_send_name: 'Cancelled one' }));
    await startDueSends(t.deps, t.clock.now());
    assert.equal((await t.a.delete('/single/send/delete', { utr })).status, 200);
    await completeSends(t.deps, t.clock.now());
    assert.equal(await status(utr), 3);
    const notes = await t.database.db
      .selectFrom('mail_messages')
      .select('id')
      .where('kind', '=', 'system')
      .where('payload', 'like', '%Cancelled one%')
      .execute();
    assert.equal(notes.length, 0);
  });
});
