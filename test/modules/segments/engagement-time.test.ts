import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { drainQueue, make } from '../../helpers.js';
import { createSegment } from '../segments.helpers.js';
import { addSchedule, automationForm, createAutomation, scheduleForm } from '../automations.helpers.js';
import {
  createSend,
  group,
  messagesOf,
  sendForm,
  sendRow,
  setupSends,
  verifiedSender,
  type SendsContext,
} from '../single-sends.helpers.js';
import { countInList, countOf, DAY, definition, membersOf, seedMessage } from './engagement.helpers.js';
import { liveSegmentsTask, REFRESH_EVERY_MS } from '../../../src/modules/segments/segments.live.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

describe('engagement segments follow the clock', () => {
  let t: SendsContext;
  let type: number;
  let sendId: number;
  let opened: number;
  let quiet: number;
  const a = () => t.a.keys!.user_id;

  before(async () => {
    t = await setupSends({ start: '2030-03-01T12:00:00.000Z' });
    type = await make.contactType(t.a, 'People');
    for (const email of ['ann@example.com', 'bob@example.com']) await make.contact(t.a, { contact_type_id: type, email });
    const base = { sender: await verifiedSender(t, t.a), group: await group(t.a), type };
    const utr = await createSend(t.a, sendForm(base, { schedule_type: 1, schedule_date: '2031-01-01', schedule_time: '10:00' }));
    sendId = (await sendRow(t, utr)).id;
    await seedMessage(t, { userId: a(), email: 'ann@example.com', sendId, sentAgo: 6 * DAY, openedAgo: 5 * DAY });
    await seedMessage(t, { userId: a(), email: 'bob@example.com', sendId, sentAgo: 6 * DAY });
    opened = await createSegment(t.a, definition(type, [['engagement', 'opened in the last', '7']]));
    quiet = await createSegment(t.a, definition(type, [['engagement', 'not opened in the last', '7']]));
  });
  after(() => t.close());

  /** One round of the scheduler's recomputation of live segments, at the clock's time. */
  const recompute = () => liveSegmentsTask.run(t.deps, t.clock.now());

  it('a window that slides past the open takes the contact out, and into the complement, at the next recomputation', async () => {
    assert.deepEqual(await membersOf(t.a, opened), ['ann@example.com']);
    assert.deepEqual(await membersOf(t.a, quiet), ['bob@example.com']);
    assert.equal(await recompute(), 2, 'both segments are due: never recomputed since they were made');
    t.clock.advance(2 * DAY - SECOND);
    assert.equal(await recompute(), 2);
    assert.deepEqual(await membersOf(t.a, opened), ['ann@example.com'], 'one second before the window passes the open');
    assert.equal(await countInList(t.a, opened), 1);
    assert.equal(await countOf(t.a, definition(type, [['engagement', 'opened in the last', '7']])), 1);
    t.clock.advance(2 * SECOND);
    // A definition counted before it is saved is counted at this moment; the saved segments are
    // read as of their last recomputation, and a read never recomputes them.
    assert.equal(await countOf(t.a, definition(type, [['engagement', 'opened in the last', '7']])), 0);
    assert.equal(await countInList(t.a, opened), 1, 'the list shows the last recomputation');
    assert.deepEqual(await membersOf(t.a, opened), ['ann@example.com']);
    assert.equal(await recompute(), 0, 'recomputed less than an hour ago');
    t.clock.advance(HOUR - 2 * SECOND);
    assert.equal(await recompute(), 2, 'an hour after the last recomputation');
    assert.equal(await countInList(t.a, opened), 0);
    assert.deepEqual(await membersOf(t.a, opened), []);
    assert.deepEqual(await membersOf(t.a, quiet), ['ann@example.com', 'bob@example.com']);
  });

  it('an open counts at the next recomputation', async () => {
    await seedMessage(t, { userId: a(), email: 'bob@example.com', kind: 'automation', sentAgo: HOUR, openedAgo: SECOND });
    assert.equal(await countInList(t.a, opened), 0, 'not before');
    t.clock.advance(HOUR);
    await drainQueue(t);
    assert.equal(await countInList(t.a, opened), 1);
    assert.deepEqual(await membersOf(t.a, opened), ['bob@example.com']);
    assert.deepEqual(await membersOf(t.a, quiet), ['ann@example.com']);
  });
});

describe('a send to an engagement segment goes to its members when it starts', () => {
  let t: SendsContext;

  before(async () => {
    t = await setupSends({ start: '2030-03-01T12:00:00.000Z' });
  });
  after(() => t.close());

  it('mails whoever matches at the start, not at the last read', async () => {
    const a = t.a.keys!.user_id;
    const type = await make.contactType(t.a, 'People');
    for (const email of ['ann@example.com', 'bob@example.com', 'cid@example.com'])
      await make.contact(t.a, { contact_type_id: type, email });
    const base = { sender: await verifiedSender(t, t.a), group: await group(t.a), type };
    // ann's open leaves the 7-day window 30 minutes from now; bob opens 30 minutes from now.
    await seedMessage(t, { userId: a, email: 'ann@example.com', kind: 'automation', sentAgo: 8 * DAY, openedAgo: 7 * DAY - 30 * MINUTE });
    const bobMessage = await seedMessage(t, { userId: a, email: 'bob@example.com', kind: 'automation', sentAgo: 8 * DAY });
    const segment = await createSegment(t.a, definition(type, [['engagement', 'opened in the last', '7']]));
    assert.deepEqual(await membersOf(t.a, segment), ['ann@example.com']);
    const utr = await createSend(
      t.a,
      sendForm(
        { ...base, type },
        { recipient_id: [`segments_${segment}`], schedule_type: 1, schedule_date: '2030-03-01', schedule_time: '13:00' },
      ),
    );
    t.clock.advance(30 * MINUTE);
    const at = t.clock
      .now()
      .toISOString()
      .replace(/\.(\d{3})Z$/, '.$1000Z');
    await t.database.db.updateTable('mail_messages').set({ last_human_opened_at: at }).where('id', '=', bobMessage).execute();
    t.clock.advance(30 * MINUTE);
    // The count reads the members as last computed (ann, at the segment's creation): a read recomputes nothing.
    const count = await t.a.get('/single-send/recipients-count', { utr });
    assert.deepEqual(count.body.message, { count: 1 });
    assert.deepEqual(await membersOf(t.a, segment), ['ann@example.com']);
    await drainQueue(t);
    const messages = await messagesOf(t, utr);
    assert.deepEqual(
      messages.map((m) => [m.email_key, m.state]),
      [['bob@example.com', 'sent']],
    );
    assert.deepEqual(await membersOf(t.a, segment), ['bob@example.com'], 'the start recomputed the segment');
  });
});

describe('an automation on an engagement segment enrols who joins by the passing of time, within the hour', () => {
  let t: SendsContext;

  before(async () => {
    t = await setupSends({ start: '2030-03-01T12:00:00.000Z' });
  });
  after(() => t.close());

  const enrolled = async (automationId: number) =>
    (
      await t.database.db
        .selectFrom('automation_enrollments')
        .select('email_key')
        .where('automation_id', '=', automationId)
        .orderBy('email_key')
        .execute()
    ).map((e) => e.email_key);

  it('enrols members at go-live, then each contact whose last open leaves the window within an hour', async () => {
    const a = t.a.keys!.user_id;
    const type = await make.contactType(t.a, 'People');
    for (const email of ['p1@example.com', 'p2@example.com', 'p3@example.com']) await make.contact(t.a, { contact_type_id: type, email });
    // p1 opened 5 days ago (quiet in 2 days); p2 opened 7 days less 10 minutes ago (quiet in 10 minutes); p3 never opened.
    await seedMessage(t, { userId: a, email: 'p1@example.com', kind: 'automation', sentAgo: 9 * DAY, openedAgo: 5 * DAY });
    await seedMessage(t, { userId: a, email: 'p2@example.com', kind: 'automation', sentAgo: 9 * DAY, openedAgo: 7 * DAY - 10 * MINUTE });
    await seedMessage(t, { userId: a, email: 'p3@example.com', kind: 'automation', sentAgo: 9 * DAY });
    const segment = await createSegment(t.a, definition(type, [['engagement', 'not opened in the last', '7']]));
    const base = { sender: await verifiedSender(t, t.a), group: await group(t.a), type, segment };
    const utr = await createAutomation(t.a, automationForm(base, { type: 'custom', automation_for: `segments_${segment}` }));
    await addSchedule(t.a, scheduleForm(base, utr, { waiting_type: 'days', waiting_period: 30 }));
    // The segment is read last now; the go-live sees it as of its own moment.
    t.clock.advance(20 * MINUTE);
    assert.equal((await t.a.get('/automations/set-live', { utr })).status, 200);
    const id = (await t.database.db.selectFrom('automations').select('id').where('utr', '=', utr).executeTakeFirstOrThrow()).id;
    assert.deepEqual(await enrolled(id), ['p2@example.com', 'p3@example.com']);

    // p1 joins 2 days after the go-live, less 20 minutes; nothing reads the segment meanwhile.
    t.clock.advance(2 * DAY - 20 * MINUTE - MINUTE);
    await drainQueue(t);
    assert.deepEqual(await enrolled(id), ['p2@example.com', 'p3@example.com'], 'p1 has not joined yet');
    const next = await liveSegmentsTask.nextDueAt!(t.deps, t.clock.now());
    assert.ok(next && next.getTime() <= t.clock.now().getTime() + REFRESH_EVERY_MS, 'the next recomputation is due within the hour');
    // p1 joined a minute ago; the next recomputation (within the hour of that) enrols p1.
    t.clock.set(next!);
    await drainQueue(t);
    assert.deepEqual(await enrolled(id), ['p1@example.com', 'p2@example.com', 'p3@example.com']);
  });
});
