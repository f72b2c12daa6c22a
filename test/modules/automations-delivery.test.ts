import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { drainQueue, ENGINE, make } from '../helpers.js';
import { startJobs } from '../../src/lanes.js';
import { upload } from './contacts-csv.helpers.js';
import { group, setupSends, typeWith, verifiedSender, type SendsContext } from './single-sends.helpers.js';
import { act, addEmail, automationWith, subjectsTo, type EmailSpec } from './automations-delivery.helpers.js';
import { automationDetails } from './automations.helpers.js';

const HOUR = 3600_000;
const DAY = 24 * HOUR;

describe('automations: each enrolled address gets the sequence through the queue, on a test clock, into a real SMTP server', () => {
  let t: SendsContext;
  let sender: number;
  let grp: number;

  before(async () => {
    t = await setupSends({ sink: true });
    sender = await verifiedSender(t, t.a);
    grp = await group(t.a);
    await drainQueue(t); // the sender's verification mail
  });
  after(() => t.close());

  /** A live welcome automation with `emails` on a new, empty contact type. */
  async function liveWelcome(emails: EmailSpec[]): Promise<{ type: number; utr: string }> {
    const { type } = await typeWith(t.a, []);
    const utr = await automationWith(t.a, { type: 'welcome', target: `contacts_${type}`, group: grp, sender, emails });
    await act(t.a, '/automations/set-live', utr);
    return { type, utr };
  }

  test('a welcome automation mails a contact added after go-live and not one added before; totals and the live event', async () => {
    assert.equal((await t.a.post('/notification-recipient/save', { email_address: 'boss@example.com', email_owner: 'Boss' })).status, 200);
    const { type, ids } = await typeWith(t.a, [['before@example.com', 'Early']]);
    const utr = await automationWith(t.a, {
      type: 'welcome',
      target: `contacts_${type}`,
      group: grp,
      sender,
      emails: [{ subject: 'Welcome ((first_name))' }],
    });
    await act(t.a, '/automations/set-live', utr);
    await make.contact(t.a, { contact_type_id: type, email: 'after@example.com', first_name: 'Late' });
    // A member from before go-live who is updated has not joined.
    const upd = {
      contact_id: ids[0],
      contact_type_id: type,
      first_name: 'Early',
      last_name: 'Bird',
      email: 'before@example.com',
      country: 101,
    };
    assert.equal((await t.a.post('/contacts/update', upd)).status, 200);
    await drainQueue(t);
    assert.deepEqual(subjectsTo(t, 'after@example.com'), ['Welcome Late']);
    assert.deepEqual(subjectsTo(t, 'before@example.com'), []);
    const [mail] = t.sink!.to('after@example.com');
    assert.match(mail.html!, /Welcome Late: hello Late/);
    assert.match(mail.header('list-unsubscribe')!, /^<https:\/\/mail\.example\.test\/u\/[^>]+>, <mailto:/);
    assert.equal(mail.header('list-unsubscribe-post'), 'List-Unsubscribe=One-Click');
    assert.match(mail.html!, /\/t\/open\/[^"]+\.gif/, 'the open pixel');
    assert.ok(
      t.sink!.to('boss@example.com').some((m) => /live/i.test(m.subject)),
      'automation.live reached the notification recipient',
    );
    const a = await automationDetails(t.a, utr);
    assert.equal(a.status, 1);
    assert.equal(a.total_triggered, 1);
    assert.equal(a.total_delivered, 1);
  });

  test('a custom automation mails every current member of a segment (matched and hand-added) once, and later joiners', async () => {
    const { type } = await typeWith(t.a, [
      ['vip1@example.com', 'Vic'],
      ['VIP1@example.com'.toLowerCase() === 'vip1@example.com' ? 'other@example.com' : 'x', 'Olga'],
    ]);
    const seg = await t.a.post('/segment/create', {
      segment_name: 'VIPs',
      contact_type_id: type,
      select_field: ['email'],
      select_operator: ['starts with'],
      value: ['vip'],
    });
    assert.equal(seg.status, 200, seg.text);
    await t.a.post('/segment/email/store', { segment_id: seg.body.id, first_name: 'Hand', last_name: 'Added', email: 'hand@example.com' });
    const utr = await automationWith(t.a, {
      type: 'custom',
      target: `segments_${seg.body.id}`,
      group: grp,
      sender,
      emails: [{ subject: 'Hello ((first_name))' }],
    });
    await act(t.a, '/automations/set-live', utr);
    await drainQueue(t);
    assert.deepEqual(subjectsTo(t, 'vip1@example.com'), ['Hello Vic']);
    assert.deepEqual(subjectsTo(t, 'hand@example.com'), ['Hello Hand']);
    assert.deepEqual(subjectsTo(t, 'other@example.com'), [], 'not a member');
    // A later joiner: a contact updated into the segment, and a hand-added address.
    const [other] = await t.database.db.selectFrom('contacts').select('id').where('email', '=', 'other@example.com').execute();
    const upd = await t.a.post('/contacts/update', {
      contact_id: other.id,
      contact_type_id: type,
      first_name: 'Olga',
      last_name: 'L',
      email: 'vip2@example.com',
      country: 101,
    });
    assert.equal(upd.status, 200, upd.text);
    await t.a.post('/segment/email/store', {
      segment_id: seg.body.id,
      first_name: 'Second',
      last_name: 'Hand',
      email: 'hand2@example.com',
    });
    await drainQueue(t);
    assert.deepEqual(subjectsTo(t, 'vip2@example.com'), ['Hello Olga']);
    assert.deepEqual(subjectsTo(t, 'hand2@example.com'), ['Hello Second']);
    // Set live again (idempotent or after a pause): nobody gets the email twice.
    await act(t.a, '/automations/pause', utr);
    await act(t.a, '/automations/set-live', utr);
    await drainQueue(t);
    assert.deepEqual(subjectsTo(t, 'vip1@example.com'), ['Hello Vic']);
    assert.equal((await automationDetails(t.a, utr)).total_delivered, 4);
  });

  test('three emails waiting instantly, 2 hours and 1 day arrive in order, each at its time and not before', async () => {
    const { type } = await liveWelcome([
      { subject: 'First' },
      { subject: 'Second', wait: [2, 'hours'] },
      { subject: 'Third', wait: [1, 'days'] },
    ]);
    await make.contact(t.a, { contact_type_id: type, email: 'seq@example.com' });
    await drainQueue(t);
    assert.deepEqual(subjectsTo(t, 'seq@example.com'), ['First']);
    t.clock.advance(2 * HOUR - 1000);
    await drainQueue(t);
    assert.deepEqual(subjectsTo(t, 'seq@example.com'), ['First'], 'not a second early');
    t.clock.advance(1000);
    await drainQueue(t);
    assert.deepEqual(subjectsTo(t, 'seq@example.com'), ['First', 'Second']);
    t.clock.advance(DAY - 1000);
    await drainQueue(t);
    assert.deepEqual(subjectsTo(t, 'seq@example.com'), ['First', 'Second']);
    t.clock.advance(1000);
    await drainQueue(t);
    assert.deepEqual(subjectsTo(t, 'seq@example.com'), ['First', 'Second', 'Third']);
    t.clock.advance(30 * DAY);
    await drainQueue(t);
    assert.equal(subjectsTo(t, 'seq@example.com').length, 3, 'nothing after the last email');
  });

  test('pause holds due emails and joiners; set live again sends what came due meanwhile; the paused event is mailed', async () => {
    const { type, utr } = await liveWelcome([{ subject: 'P1' }, { subject: 'P2', wait: [1, 'hours'] }]);
    await make.contact(t.a, { contact_type_id: type, email: 'p@example.com' });
    await drainQueue(t);
    assert.deepEqual(subjectsTo(t, 'p@example.com'), ['P1']);
    await act(t.a, '/automations/pause', utr);
    assert.equal((await automationDetails(t.a, utr)).status, 0);
    await make.contact(t.a, { contact_type_id: type, email: 'joined-paused@example.com' });
    t.clock.advance(3 * HOUR);
    await drainQueue(t);
    assert.deepEqual(subjectsTo(t, 'p@example.com'), ['P1'], 'paused: P2 waits');
    assert.deepEqual(subjectsTo(t, 'joined-paused@example.com'), [], 'paused: the joiner waits');
    assert.ok(
      t.sink!.to('boss@example.com').some((m) => /paused/i.test(m.subject)),
      'automation.paused reached the notification recipient',
    );
    await act(t.a, '/automations/set-live', utr);
    await drainQueue(t);
    assert.deepEqual(subjectsTo(t, 'p@example.com'), ['P1', 'P2']);
    assert.deepEqual(subjectsTo(t, 'joined-paused@example.com'), ['P1']);
  });

  test('a pause holds mail already queued and not yet claimed; set live releases it', async () => {
    const { type, utr } = await liveWelcome([{ subject: 'Q1' }]);
    await make.contact(t.a, { contact_type_id: type, email: 'held@example.com' });
    // A tick's scheduler round steps the enrollment into the queue; the mail lane claims nothing (batch of 0).
    await drainQueue(t, { batchSize: 0 });
    const queued = await t.database.db.selectFrom('mail_messages').select('state').where('email', '=', 'held@example.com').execute();
    assert.deepEqual(
      queued.map((q) => q.state),
      ['queued'],
    );
    await act(t.a, '/automations/pause', utr);
    await drainQueue(t);
    assert.deepEqual(subjectsTo(t, 'held@example.com'), []);
    const [held] = await t.database.db.selectFrom('mail_messages').select('state').where('email', '=', 'held@example.com').execute();
    assert.equal(held.state, 'held');
    await act(t.a, '/automations/set-live', utr);
    await drainQueue(t);
    assert.deepEqual(subjectsTo(t, 'held@example.com'), ['Q1']);
  });

  test('exit criteria 1: a contact updated out of the segment leaves the automation; with 0 it stays', async () => {
    const { type, ids } = await typeWith(t.a, [
      ['x-leave@example.com', 'Leave'],
      ['y-leave@example.com', 'Stay'],
    ]);
    const seg = await t.a.post('/segment/create', {
      segment_name: 'Leavers',
      contact_type_id: type,
      select_field: ['last_name'],
      select_operator: ['is'],
      value: ['Lovelace'],
    });
    const emails = [{ subject: 'E1' }, { subject: 'E2', wait: [1, 'days'] as [number, 'days'] }];
    const leaving = await automationWith(t.a, { type: 'custom', target: `segments_${seg.body.id}`, group: grp, sender, emails, exit: 1 });
    const staying = await automationWith(t.a, {
      type: 'custom',
      target: `segments_${seg.body.id}`,
      group: grp,
      sender,
      emails: [{ subject: 'S1' }, { subject: 'S2', wait: [1, 'days'] }],
      exit: 0,
    });
    await act(t.a, '/automations/set-live', leaving);
    await act(t.a, '/automations/set-live', staying);
    await drainQueue(t);
    assert.deepEqual(subjectsTo(t, 'x-leave@example.com').sort(), ['E1', 'S1']);
    const r = await t.a.post('/contacts/update', {
      contact_id: ids[0],
      contact_type_id: type,
      first_name: 'Leave',
      last_name: 'Gone',
      email: 'x-leave@example.com',
      country: 101,
    });
    assert.equal(r.status, 200, r.text);
    t.clock.advance(DAY);
    await drainQueue(t);
    assert.deepEqual(subjectsTo(t, 'x-leave@example.com').sort(), ['E1', 'S1', 'S2'], 'left the exit-criteria automation only');
    assert.deepEqual(subjectsTo(t, 'y-leave@example.com').sort(), ['E1', 'E2', 'S1', 'S2']);
    const [exited] = await t.database.db
      .selectFrom('automation_enrollments')
      .selectAll()
      .where('email', '=', 'x-leave@example.com')
      .where('state', '=', 'exited')
      .execute();
    assert.equal(exited.exit_reason, 'left the target');
  });

  test('an unsubscribe through the first email ends the sequence, and opens and the unsubscribe are counted', async () => {
    const { type, utr } = await liveWelcome([{ subject: 'U1' }, { subject: 'U2', wait: [1, 'hours'] }]);
    await make.contact(t.a, { contact_type_id: type, email: 'unsub@example.com' });
    await make.contact(t.a, { contact_type_id: type, email: 'keeps@example.com' });
    await drainQueue(t);
    const [mail] = t.sink!.to('unsub@example.com');
    const pixel = /https:\/\/mail\.example\.test(\/t\/open\/[^"]+\.gif)/.exec(mail.html!)![1];
    for (let i = 0; i < 2; i++) assert.equal((await t.anon.get(pixel)).status, 200);
    const unsubscribe = /<https:\/\/mail\.example\.test(\/u\/[^>]+)>/.exec(mail.header('list-unsubscribe')!)![1];
    const r = await t.anon.post(unsubscribe, { 'List-Unsubscribe': 'One-Click' });
    assert.equal(r.status, 200, r.text);
    t.clock.advance(HOUR);
    await drainQueue(t);
    assert.deepEqual(subjectsTo(t, 'unsub@example.com'), ['U1']);
    assert.deepEqual(subjectsTo(t, 'keeps@example.com'), ['U1', 'U2']);
    const a = await automationDetails(t.a, utr);
    assert.deepEqual([a.total_triggered, a.total_delivered, a.total_opens, a.total_unique_opens, a.total_unsubscribe], [3, 3, 2, 1, 1]);
    const groups = await t.database.db
      .selectFrom('unsubscribers')
      .select('unsubscribe_groups_id')
      .where('email_key', '=', 'unsub@example.com')
      .execute();
    assert.deepEqual(groups, [{ unsubscribe_groups_id: grp }], "one-click unsubscribes from the automation's group");
  });

  test('a hard bounce counts in total_bounces and ends the sequence for that address', async () => {
    const { type, utr } = await liveWelcome([{ subject: 'B1' }, { subject: 'B2', wait: [1, 'hours'] }]);
    t.sink!.reject('bad-box@example.com', 550, { text: '5.1.1 <bad-box@example.com>: user unknown' });
    await make.contact(t.a, { contact_type_id: type, email: 'bad-box@example.com' });
    await drainQueue(t);
    t.clock.advance(HOUR);
    await drainQueue(t);
    const a = await automationDetails(t.a, utr);
    assert.deepEqual([a.total_triggered, a.total_delivered, a.total_bounces], [1, 0, 1]);
    const [e] = await t.database.db.selectFrom('automation_enrollments').selectAll().where('email', '=', 'bad-box@example.com').execute();
    assert.equal(e.state, 'exited');
  });

  test('a contact deleted mid-sequence leaves the automation', async () => {
    const { type } = await liveWelcome([{ subject: 'C1' }, { subject: 'C2', wait: [1, 'hours'] }]);
    const id = await make.contact(t.a, { contact_type_id: type, email: 'deleted-mid@example.com' });
    await drainQueue(t);
    assert.equal((await t.a.delete('/contacts/delete', { contact_id: id })).status, 200);
    t.clock.advance(HOUR);
    await drainQueue(t);
    assert.deepEqual(subjectsTo(t, 'deleted-mid@example.com'), ['C1']);
    const [e] = await t.database.db
      .selectFrom('automation_enrollments')
      .selectAll()
      .where('email', '=', 'deleted-mid@example.com')
      .execute();
    assert.deepEqual([e.state, e.exit_reason], ['exited', 'the contact was deleted']);
  });

  test('delete stops every enrollment and cancels mail not yet sent', async () => {
    const { type, utr } = await liveWelcome([{ subject: 'D1' }, { subject: 'D2', wait: [1, 'hours'] }]);
    await make.contact(t.a, { contact_type_id: type, email: 'del1@example.com' });
    await drainQueue(t);
    await make.contact(t.a, { contact_type_id: type, email: 'del2@example.com' });
    await drainQueue(t, { batchSize: 0 }); // del2's first email is queued, not sent
    assert.equal((await t.a.delete('/automations/delete', { utr })).status, 200);
    t.clock.advance(2 * HOUR);
    await drainQueue(t);
    assert.deepEqual(subjectsTo(t, 'del1@example.com'), ['D1']);
    assert.deepEqual(subjectsTo(t, 'del2@example.com'), []);
    await make.contact(t.a, { contact_type_id: type, email: 'del3@example.com' });
    await drainQueue(t);
    assert.deepEqual(subjectsTo(t, 'del3@example.com'), [], 'a deleted automation enrols nobody');
  });

  test('an email added to a live automation reaches the enrollments that have not passed that point', async () => {
    const { type, utr } = await liveWelcome([{ subject: 'A1' }]);
    await make.contact(t.a, { contact_type_id: type, email: 'grow@example.com' });
    await drainQueue(t);
    await addEmail(t.a, utr, sender, { subject: 'A2', wait: [1, 'days'] });
    t.clock.advance(DAY);
    await drainQueue(t);
    assert.deepEqual(subjectsTo(t, 'grow@example.com'), ['A1', 'A2']);
    // An email deleted before it is due is skipped: the next one follows its own wait.
    await addEmail(t.a, utr, sender, { subject: 'A3', wait: [1, 'days'] });
    await addEmail(t.a, utr, sender, { subject: 'A4', wait: [2, 'days'] });
    const list = await t.a.get('/automations/schedule', { utr });
    const a3 = list.body.message.automation_schedules.find((s: { subject: string }) => s.subject === 'A3');
    assert.equal((await t.a.delete('/automations/schedule/delete', { utr: a3.utr })).status, 200);
    t.clock.advance(DAY);
    await drainQueue(t);
    assert.deepEqual(subjectsTo(t, 'grow@example.com'), ['A1', 'A2']);
    t.clock.advance(DAY);
    await drainQueue(t);
    assert.deepEqual(subjectsTo(t, 'grow@example.com'), ['A1', 'A2', 'A4']);
  });

  test('a CSV import into the target enrols every imported contact in the import itself; another account never joins', async () => {
    const { type, utr } = await liveWelcome([{ subject: 'Imported' }]);
    const rows = Array.from({ length: 300 }, (_, i) => `imp${i}@example.com,Imp${i},Doe,101`);
    const r = await upload(t.a, type, `email,first_name,last_name,country\n${rows.join('\n')}\n`);
    assert.equal(r.status, 200, r.text);
    const enrolled = await t.database.db
      .selectFrom('automation_enrollments as e')
      .innerJoin('automations as a', 'a.id', 'e.automation_id')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('a.utr', '=', utr)
      .executeTakeFirstOrThrow();
    assert.equal(Number(enrolled.n), 300, 'enrolled when the import answered');
    // Account B imports into its own type: A's automation is untouched.
    const bType = await make.contactType(t.b);
    await upload(t.b, bType, 'email,first_name,last_name,country\nb-imp@example.com,B,Doe,101\n');
    await drainQueue(t);
    assert.equal(t.sink!.messages.filter((m) => m.subject === 'Imported').length, 300);
    assert.deepEqual(subjectsTo(t, 'b-imp@example.com'), []);
  });

  test('a duplicate is a draft that sends nothing until set live, then runs on its own', async () => {
    const { type } = await typeWith(t.a, [['dup@example.com', 'Dup']]);
    const utr = await automationWith(t.a, {
      type: 'custom',
      target: `contacts_${type}`,
      group: grp,
      sender,
      emails: [{ subject: 'Original' }],
    });
    await act(t.a, '/automations/set-live', utr);
    await drainQueue(t);
    const d = await t.a.get('/automations/duplicate', { utr });
    assert.equal(d.status, 200, d.text);
    const copy = d.body.message.utr;
    await drainQueue(t);
    assert.deepEqual(subjectsTo(t, 'dup@example.com'), ['Original']);
    await act(t.a, '/automations/set-live', copy);
    await drainQueue(t);
    assert.deepEqual(subjectsTo(t, 'dup@example.com'), ['Original', 'Original']);
  });

  test('two workers stepping the same due enrollments at once queue each email once', async () => {
    const { type, utr } = await liveWelcome([{ subject: 'Race' }]);
    const rows = Array.from({ length: 2500 }, (_, i) => `race${i}@example.com,R,Doe,101`);
    assert.equal((await upload(t.a, type, `email,first_name,last_name,country\n${rows.join('\n')}\n`)).status, 200);
    await Promise.all([drainQueue(t), drainQueue(t)]);
    const races = t.sink!.messages.filter((m) => m.subject === 'Race');
    assert.equal(races.length, 2500);
    assert.equal(new Set(races.map((m) => m.envelope.to[0])).size, 2500);
    assert.equal((await automationDetails(t.a, utr)).total_triggered, 2500);
  });

  test(`a joiner wakes an idle worker (${ENGINE === 'postgres' ? 'a NOTIFY through the listener' : 'polling'})`, async () => {
    const { type } = await liveWelcome([{ subject: 'Woken' }]);
    const listener = t.database.listener;
    for (let i = 0; i < 100 && listener && !listener.isListening(); i++) await new Promise((r) => setTimeout(r, 20));
    // On PostgreSQL no poll could find the joiner in time: only the notification of its enrolment wakes the worker.
    const worker = startJobs(t.deps, {
      lanes: ['scheduler', 'mail'],
      ...(ENGINE === 'postgres' ? { pollMs: 60_000, idleMaxMs: 60_000 } : { pollMs: 50 }),
    });
    try {
      await new Promise((r) => setTimeout(r, 150));
      await make.contact(t.a, { contact_type_id: type, email: 'woken@example.com' });
      await t.sink!.waitFor((m) => m.envelope.to.includes('woken@example.com'), 5000);
    } finally {
      await worker.stop();
    }
  });

  test('the automation queue depth is on /metrics', async () => {
    const { type, utr } = await liveWelcome([{ subject: 'M1' }]);
    await make.contact(t.a, { contact_type_id: type, email: 'm1@example.com' });
    await make.contact(t.a, { contact_type_id: type, email: 'm2@example.com' });
    await drainQueue(t, { batchSize: 0 });
    const text = (await t.anon.get('/metrics')).text;
    assert.match(text, /^automation_queue_depth\{state="due"\} 0$/m);
    assert.match(text, /^automation_queue_depth\{state="queued"\} 2$/m);
    await act(t.a, '/automations/pause', utr);
    assert.match((await t.anon.get('/metrics')).text, /^automation_queue_depth\{state="held"\} 2$/m);
    await act(t.a, '/automations/set-live', utr);
    await drainQueue(t);
  });
});
