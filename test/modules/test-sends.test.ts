import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { simpleParser } from 'mailparser';
import { drainQueue } from '../helpers.js';
import { trackingLinks } from '../../src/delivery/tracking.js';
import { addEmail, automationWith } from './automations-delivery.helpers.js';
import { schedulesOf } from './automations.helpers.js';
import {
  createSend,
  details,
  group,
  sendForm,
  sendRow,
  setupSends,
  typeWith,
  verifiedSender,
  type SendsContext,
} from './single-sends.helpers.js';

const SENT = { status: 'success', message: 'Sent Successfully' };
const RNF = { status: 'failed', errors: 'Record not found' };

describe('test sends: a send or automation email to a few addresses, through the queue, counted nowhere', () => {
  let t: SendsContext;
  let base: { sender: number; group: number; type: number };
  let utr: string;

  before(async () => {
    t = await setupSends({ sink: true });
    const { type } = await typeWith(t.a, [['tom@example.com', 'Tom']]);
    base = { sender: await verifiedSender(t, t.a), group: await group(t.a), type };
    // Scheduled next year: the real send must not start while its tests go out.
    utr = await createSend(
      t.a,
      sendForm(base, {
        subject: 'News for ((first_name))',
        template_html: '<html><body><p>Hello ((first_name)) ((email))</p></body></html>',
        schedule_type: 1,
        schedule_date: '2031-01-15',
        schedule_time: '10:30',
      }),
    );
  });
  after(() => t.close());

  test("sends the send's mail with [Test] in the subject, placeholders from the address's contact, else the first recipient's", async () => {
    const before = await details(t.a, utr);
    const r = await t.a.post('/single/send/test', { utr, emails: ['tom@example.com', 'Stranger@Example.com', 'tom@example.com'] });
    assert.deepEqual(r.body, SENT);
    await drainQueue(t);
    const [tom] = t.sink!.to('tom@example.com');
    const [stranger] = t.sink!.to('stranger@example.com');
    assert.equal(t.sink!.to('tom@example.com').length, 1, 'each address once');
    assert.equal(tom.subject, '[Test] News for Tom');
    assert.equal(stranger.subject, '[Test] News for Tom');
    const mail = await simpleParser(tom.raw);
    assert.match(mail.text ?? '', /Hello Tom tom@example\.com/);
    assert.equal(tom.header('list-unsubscribe-post'), 'List-Unsubscribe=One-Click');
    // The send itself is untouched: same status, nothing triggered or delivered.
    const after = await details(t.a, utr);
    for (const key of ['status', 'triggered', 'delivered', 'bounces', 'unique_opens', 'total_opens'])
      assert.equal(after[key], before[key], key);
    const row = await sendRow(t, utr);
    assert.equal(row.delivered, 0);
  });

  test('an open of a test mail counts on no statistic', async () => {
    const message = await t.database.db
      .selectFrom('mail_messages')
      .selectAll()
      .where('kind', '=', 'test')
      .where('email_key', '=', 'tom@example.com')
      .executeTakeFirstOrThrow();
    const links = trackingLinks(t.config);
    assert.equal((await t.anon.get(`/t/open/${links.openToken(message.id)}.gif`)).status, 200);
    const row = await sendRow(t, utr);
    assert.deepEqual([row.total_opens, row.unique_opens], [0, 0]);
  });

  test('validates utr and emails with field messages', async () => {
    const none = await t.a.post('/single/send/test', {});
    assert.equal(none.status, 422);
    assert.deepEqual(none.body, {
      status: 'failed',
      errors: { utr: ['The utr field is required.'], emails: ['The emails field is required.'] },
    });
    const bad = await t.a.post('/single/send/test', { utr, emails: ['not-an-address'] });
    assert.equal(bad.status, 422);
    assert.deepEqual(Object.keys(bad.body.errors), ['emails.0']);
    const many = await t.a.post('/single/send/test', { utr, emails: Array.from({ length: 11 }, (_, i) => `p${i}@example.com`) });
    assert.equal(many.status, 422);
    assert.deepEqual(many.body.errors, { emails: ['The emails must not have more than 10 items.'] });
  });

  test("an unknown utr, or another account's, is Record not found; nothing is queued", async () => {
    const count = async () =>
      Number(
        (
          await t.database.db
            .selectFrom('mail_messages')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const n = await count();
    assert.deepEqual((await t.a.post('/single/send/test', { utr: 'no-such-utr', emails: ['x@example.com'] })).body, RNF);
    const other = await t.b.post('/single/send/test', { utr, emails: ['x@example.com'] });
    assert.equal(other.status, 404);
    assert.deepEqual(other.body, RNF);
    assert.equal(await count(), n);
  });

  test('a send whose sender is no longer verified: 422 on sender_id', async () => {
    const sender = await verifiedSender(t, t.a, { nickname: 'Later unverified' });
    const draft = await createSend(
      t.a,
      sendForm({ ...base, sender }, { schedule_type: 1, schedule_date: '2031-01-15', schedule_time: '10:30' }),
    );
    await t.database.db.updateTable('senders').set({ is_verified: 0 }).where('id', '=', sender).execute();
    const r = await t.a.post('/single/send/test', { utr: draft, emails: ['x@example.com'] });
    assert.equal(r.status, 422);
    assert.deepEqual(r.body, { status: 'failed', errors: { sender_id: ['The selected sender id is not verified.'] } });
  });

  test('an automation email: its mail with [Test], the automation unchanged', async () => {
    const automation = await automationWith(t.a, {
      type: 'custom',
      target: `contacts_${base.type}`,
      group: base.group,
      sender: base.sender,
      emails: [{ subject: 'Welcome ((first_name))' }],
    });
    await addEmail(t.a, automation, base.sender, { subject: 'Second', wait: [1, 'days'] });
    const [first] = await schedulesOf(t.a, automation);
    const r = await t.a.post('/automations/schedule/test', { utr: first.utr, emails: ['tom@example.com'] });
    assert.deepEqual(r.body, SENT);
    await drainQueue(t);
    assert.ok(t.sink!.to('tom@example.com').some((m) => m.subject === '[Test] Welcome Tom'));
    const row = await t.database.db.selectFrom('automations').selectAll().where('utr', '=', automation).executeTakeFirstOrThrow();
    assert.deepEqual([row.status, row.total_triggered, row.total_delivered], [0, 0, 0]);
    assert.deepEqual((await t.b.post('/automations/schedule/test', { utr: first.utr, emails: ['x@example.com'] })).body, RNF);
    assert.deepEqual((await t.a.post('/automations/schedule/test', { utr: automation, emails: ['x@example.com'] })).body, RNF);
  });
});
