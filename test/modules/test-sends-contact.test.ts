/**
 * Whose data fills a test mail and a preview: `contact_id`, else the address's own contact, else
 * the first recipient of the send or automation email; and `GET /single-send/preview`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { simpleParser } from 'mailparser';
import { drainQueue, type Client } from '../helpers.js';
import { automationWith } from './automations-delivery.helpers.js';
import { schedulesOf } from './automations.helpers.js';
import { keyClient, keyRefused } from './access/keys.helpers.js';
import { createSend, group, sendForm, setupSends, typeWith, verifiedSender, type SendsContext } from './single-sends.helpers.js';

const SENT = { status: 'success', message: 'Sent Successfully' };
const RNF = { status: 'failed', errors: 'Record not found' };
const INVALID = { status: 'failed', errors: { contact_id: ['The selected contact id is invalid.'] } };
const DESIGN = '<html><body><p>Hello ((first_name)) ((email))</p><a href="((unsubscribe_preferences))">Leave</a></body></html>';

describe('test sends and previews filled with a chosen contact, or the first recipient', () => {
  let t: SendsContext;
  let base: { sender: number; group: number; type: number };
  let ann: number;
  let bob: number;
  let utr: string;
  let bContact: number;

  /** The one test mail an address got since the sink was last cleared, with its text part. */
  async function testTo(address: string): Promise<{ subject: string; text: string }> {
    await drainQueue(t);
    const got = t.sink!.to(address);
    assert.equal(got.length, 1, `one mail to ${address}`);
    const mail = await simpleParser(got[0].raw);
    return { subject: got[0].subject, text: mail.text ?? '' };
  }

  async function queuedCount(): Promise<number> {
    const row = await t.database.db
      .selectFrom('mail_messages')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  before(async () => {
    t = await setupSends({ sink: true });
    const people = await typeWith(t.a, [
      ['ann@example.com', 'Ann'],
      ['bob@example.com', 'Bob'],
    ]);
    [ann, bob] = people.ids;
    base = { sender: await verifiedSender(t, t.a), group: await group(t.a), type: people.type };
    utr = await createSend(
      t.a,
      sendForm(base, { template_html: DESIGN, schedule_type: 1, schedule_date: '2031-01-15', schedule_time: '10:30' }),
    );
    bContact = (await typeWith(t.b, [['zed@example.com', 'Zed']])).ids[0];
    await drainQueue(t);
  });
  after(() => t.close());

  test('without contact_id, an address that is no contact gets the first recipient’s data', async () => {
    t.sink!.clear();
    assert.deepEqual((await t.a.post('/single/send/test', { utr, emails: ['tester@example.com'] })).body, SENT);
    const mail = await testTo('tester@example.com');
    assert.equal(mail.subject, '[Test] News for Ann');
    assert.match(mail.text, /Hello Ann ann@example\.com/);
    // The queue row stays the tester's (no contact); only the data is borrowed.
    const row = await t.database.db
      .selectFrom('mail_messages')
      .select(['contact_id', 'payload'])
      .where('email_key', '=', 'tester@example.com')
      .executeTakeFirstOrThrow();
    assert.equal(row.contact_id, null);
    assert.equal(JSON.parse(row.payload!).fill_contact_id, ann);
  });

  test('with contact_id, every address gets that contact’s data, its own contact’s too', async () => {
    t.sink!.clear();
    const r = await t.a.post('/single/send/test', { utr, emails: ['tester@example.com', 'ann@example.com'], contact_id: bob });
    assert.deepEqual(r.body, SENT);
    for (const address of ['tester@example.com', 'ann@example.com']) {
      const mail = await testTo(address);
      assert.equal(mail.subject, '[Test] News for Bob', address);
      assert.match(mail.text, /Hello Bob bob@example\.com/, address);
    }
    // Without contact_id, an address that is a contact keeps its own data.
    t.sink!.clear();
    await t.a.post('/single/send/test', { utr, emails: ['bob@example.com'] });
    assert.equal((await testTo('bob@example.com')).subject, '[Test] News for Bob');
  });

  test('another account’s contact, an unknown or a deleted one: 422 on contact_id, nothing queued', async () => {
    const n = await queuedCount();
    for (const id of [bContact, 999_999]) {
      const r = await t.a.post('/single/send/test', { utr, emails: ['tester@example.com'], contact_id: id });
      assert.equal(r.status, 422);
      assert.deepEqual(r.body, INVALID);
    }
    const gone = (await typeWith(t.a, [['gone@example.com', 'Gone']])).ids[0];
    assert.equal((await t.a.delete('/contacts/delete', { contact_id: gone })).status, 200);
    assert.deepEqual((await t.a.post('/single/send/test', { utr, emails: ['x@example.com'], contact_id: gone })).body, INVALID);
    const bad = await t.a.post('/single/send/test', { utr, emails: ['x@example.com'], contact_id: 'abc' });
    assert.deepEqual(bad.body, { status: 'failed', errors: { contact_id: ['The contact id must be an integer.'] } });
    // Another account's send stays not found, whatever contact is named.
    assert.deepEqual((await t.b.post('/single/send/test', { utr, emails: ['x@example.com'], contact_id: bContact })).body, RNF);
    assert.equal(await queuedCount(), n);
  });

  test('the first recipient leaves out the excluded addresses; an audience with no contact leaves placeholders empty', async () => {
    const excluded = (await typeWith(t.a, [['ann@example.com', 'Ann again']])).type;
    const without = await createSend(
      t.a,
      sendForm(base, {
        template_html: DESIGN,
        exclude_specific_recipient_id: [`contacts_${excluded}`],
        schedule_type: 1,
        schedule_date: '2031-01-15',
        schedule_time: '10:30',
      }),
    );
    t.sink!.clear();
    await t.a.post('/single/send/test', { utr: without, emails: ['tester@example.com'] });
    assert.equal((await testTo('tester@example.com')).subject, '[Test] News for Bob');

    const empty = await createSend(
      t.a,
      sendForm(
        { ...base, type: (await typeWith(t.a, [])).type },
        { schedule_type: 1, schedule_date: '2031-01-15', schedule_time: '10:30' },
      ),
    );
    t.sink!.clear();
    await t.a.post('/single/send/test', { utr: empty, emails: ['tester@example.com'] });
    assert.equal((await testTo('tester@example.com')).subject.trim(), '[Test] News for');
  });

  test('a key without contacts.read: contact_id is refused, the default borrows no contact', async () => {
    const key: Client = await keyClient(t.a, ['sends.write'], 'Sends only');
    const r = await key.post('/single/send/test', { utr, emails: ['tester@example.com'], contact_id: bob });
    assert.equal(r.status, 403);
    assert.deepEqual(r.body, keyRefused('contacts.read'));
    t.sink!.clear();
    assert.deepEqual((await key.post('/single/send/test', { utr, emails: ['tester@example.com'] })).body, SENT);
    assert.equal((await testTo('tester@example.com')).subject.trim(), '[Test] News for');
    const preview = await key.get('/single-send/preview', { utr });
    assert.equal(preview.status, 200, preview.text);
    assert.equal(preview.body.message.preview.contact, null);
    assert.deepEqual((await key.get('/single-send/preview', { utr, contact_id: bob })).body, keyRefused('contacts.read'));
  });

  test('an automation email: contact_id, else the oldest contact of what the automation runs for', async () => {
    const automation = await automationWith(t.a, {
      type: 'custom',
      target: `contacts_${base.type}`,
      group: base.group,
      sender: base.sender,
      emails: [{ subject: 'Welcome ((first_name))' }],
    });
    const [first] = await schedulesOf(t.a, automation);
    t.sink!.clear();
    assert.deepEqual((await t.a.post('/automations/schedule/test', { utr: first.utr, emails: ['tester@example.com'] })).body, SENT);
    assert.equal((await testTo('tester@example.com')).subject, '[Test] Welcome Ann');
    t.sink!.clear();
    await t.a.post('/automations/schedule/test', { utr: first.utr, emails: ['tester@example.com'], contact_id: bob });
    assert.equal((await testTo('tester@example.com')).subject, '[Test] Welcome Bob');
    const r = await t.a.post('/automations/schedule/test', { utr: first.utr, emails: ['tester@example.com'], contact_id: bContact });
    assert.deepEqual(r.body, INVALID);
  });

  test('the preview: the first recipient by default, or contact_id; nothing counted, the unsubscribe link goes nowhere', async () => {
    const r = await t.a.get('/single-send/preview', { utr });
    assert.equal(r.status, 200, r.text);
    const p = r.body.message.preview;
    assert.deepEqual(p.contact, { id: ann, email: 'ann@example.com', first_name: 'Ann', last_name: 'Lovelace' });
    assert.equal(p.subject, 'News for Ann');
    assert.equal(p.preheader, 'What is new this spring');
    assert.match(p.html, /Hello Ann ann@example\.com/);
    assert.match(p.html, /href="#"/);
    assert.doesNotMatch(p.html, /\/t\/(open|click)\//);
    assert.match(p.text, /Hello Ann ann@example\.com/);
    const asBob = (await t.a.get('/single-send/preview', { utr, contact_id: bob })).body.message.preview;
    assert.equal(asBob.subject, 'News for Bob');
    assert.equal(asBob.contact.email, 'bob@example.com');
    // No message was queued and the send did not change.
    assert.equal((await t.a.get('/single-send/details', { utr })).body.message.singleSend[0].status, 1);
  });

  test('the preview refuses another account’s contact or send, an unknown contact and a missing utr', async () => {
    for (const id of [bContact, 999_999]) {
      const r = await t.a.get('/single-send/preview', { utr, contact_id: id });
      assert.equal(r.status, 422);
      assert.deepEqual(r.body, INVALID);
    }
    const other = await t.b.get('/single-send/preview', { utr });
    assert.equal(other.status, 404);
    assert.deepEqual(other.body, RNF);
    assert.deepEqual((await t.a.get('/single-send/preview', { utr: 'no-such-utr' })).body, RNF);
    // As every single-send endpoint: a missing utr is not found either.
    const none = await t.a.get('/single-send/preview', {});
    assert.equal(none.status, 404);
    assert.deepEqual(none.body, RNF);
  });
});
