import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { drainQueue, fieldErrors, setup, setupWithSink, type Client, type TestContext, assertNeedsKeys } from '../helpers.js';
import { SmtpSink } from '../support/smtp-sink.js';
import { enqueueEvent } from '../../src/modules/notifications/notifications.events.js';
import { TransportError, type Transport } from '../../src/delivery/transport.js';

const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const RNF = { status: 'failed', errors: 'Record Not Found' };

let seq = 0;
const uniqueEmail = (tag = 'n') => `${tag}.${process.pid}.${++seq}@example.com`;

describe('notification recipients', () => {
  let t: TestContext;
  let sink: SmtpSink;
  before(async () => {
    ({ sink, ...t } = await setupWithSink());
  });
  after(() => t.close());

  async function add(c: Client = t.a, email = uniqueEmail(), owner = 'Olga'): Promise<number> {
    const r = await c.post('/notification-recipient/save', { email_address: email, email_owner: owner });
    assert.equal(r.status, 200, r.text);
    return r.body.id;
  }
  const ids = async (c: Client = t.a) =>
    (await c.get('/notification-recipients')).body.message.notifications.map((n: { id: number }) => n.id) as number[];

  it('saves a recipient and returns its id beside the text', async () => {
    const email = uniqueEmail();
    const r = await t.a.post('/notification-recipient/save', { email_address: email, email_owner: 'Olga Owner' });
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body), ['status', 'message', 'id']);
    assert.equal(r.body.message, 'Added Successfully');
    const list = (await t.a.get('/notification-recipients')).body.message.notifications;
    const n = list.find((x: { id: number }) => x.id === r.body.id);
    assert.deepEqual(Object.keys(n), ['id', 'user_id', 'email_address', 'email_owner', 'created_at', 'updated_at']);
    assert.equal(n.user_id, t.a.keys!.user_id);
    assert.equal(n.email_address, email);
    assert.equal(n.email_owner, 'Olga Owner');
    assert.match(n.created_at, TS);
  });

  it("reports missing fields, the owner's message without a final period", async () => {
    const r = await t.a.post('/notification-recipient/save', { email_owner: ' ' });
    assert.equal(r.status, 422);
    assert.deepEqual(
      r.body,
      fieldErrors({ email_address: ['The email address field is required.'], email_owner: ['The name field is required'] }),
    );
  });

  it('rejects an invalid address and an over-long owner name', async () => {
    const r = await t.a.post('/notification-recipient/save', { email_address: 'nope', email_owner: 'x'.repeat(256) });
    assert.deepEqual(
      r.body,
      fieldErrors({
        email_address: ['The email address must be a valid email address.'],
        email_owner: ['The name must not be greater than 255 characters.'],
      }),
    );
  });

  it('rejects an address the account already has (any case), but not one of another account', async () => {
    const email = uniqueEmail('dup');
    await add(t.a, email);
    const dup = await t.a.post('/notification-recipient/save', { email_address: email.toUpperCase(), email_owner: '' });
    assert.equal(dup.status, 422);
    assert.deepEqual(
      dup.body,
      fieldErrors({ email_owner: ['The name field is required'], email_address: ['The email address has already been taken.'] }),
    );
    await add(t.b, email);
  });

  it("lists only the account's recipients, newest first, with optional paging", async () => {
    const first = await add();
    const second = await add();
    const list = await ids();
    assert.equal(list[0], second);
    assert.ok(list.includes(first));
    assert.deepEqual(
      list,
      [...list].sort((x, y) => y - x),
    );
    const other = (await t.b.get('/notification-recipients')).body.message.notifications;
    assert.ok(other.every((n: { user_id: number }) => n.user_id === t.b.keys!.user_id));
    const paged = await t.a.get('/notification-recipients', { page: 2, per_page: 1 });
    assert.equal(paged.body.message.notifications.length, 1);
    assert.deepEqual(paged.body.message.meta.page, 2);
    // A page is serialised through the route's response schema, the whole list is streamed: same records.
    const whole = (await t.a.get('/notification-recipients')).body.message.notifications;
    assert.deepEqual((await t.a.get('/notification-recipients', { per_page: 1000 })).body.message.notifications, whole);
  });

  it('deletes one recipient; an unknown, malformed or foreign id is Record Not Found', async () => {
    const id = await add();
    const r = await t.a.delete('/notification-recipient/delete', { id });
    assert.deepEqual(r.body, { status: 'success', message: 'Deleted Successfully' });
    assert.ok(!(await ids()).includes(id));
    const again = await t.a.delete('/notification-recipient/delete', { id });
    assert.equal(again.status, 404);
    assert.deepEqual(again.body, RNF);
    for (const q of [{}, { id: 'abc' }, { id: '0' }]) assert.deepEqual((await t.a.delete('/notification-recipient/delete', q)).body, RNF);
    const foreign = await add(t.b);
    assert.deepEqual((await t.a.delete('/notification-recipient/delete', { id: foreign })).body, RNF);
    assert.ok((await ids(t.b)).includes(foreign), "the other account's recipient stays");
  });

  it("bulk-deletes the account's recipients among the ids; none of them is Record Not Found", async () => {
    const one = await add();
    const two = await add();
    const keep = await add();
    const foreign = await add(t.b);
    const r = await t.a.post('/notification-recipient/bulk-delete', { strIds: [one, two, foreign] });
    assert.deepEqual(r.body, { status: 'success', message: 'Deleted Successfully' });
    const left = await ids();
    assert.ok(!left.includes(one) && !left.includes(two) && left.includes(keep));
    assert.ok((await ids(t.b)).includes(foreign));
    const none = await t.a.post('/notification-recipient/bulk-delete', { strIds: [foreign, 99999999] });
    assert.equal(none.status, 404);
    assert.deepEqual(none.body, RNF);
    const missing = await t.a.post('/notification-recipient/bulk-delete', {});
    assert.equal(missing.status, 422);
    assert.deepEqual(missing.body, fieldErrors({ strIds: ['The str ids field is required.'] }));
    const bad = await t.a.post('/notification-recipient/bulk-delete', { strIds: ['x'] });
    assert.equal(bad.status, 422);
  });

  it('requires the API keys', async () => {
    await assertNeedsKeys(t.anon, [['GET', '/notification-recipients']]);
  });
});

describe('event notifications', () => {
  let t: TestContext;
  let sink: SmtpSink;
  before(async () => {
    ({ sink, ...t } = await setupWithSink());
  });
  after(() => t.close());

  it("mails each of the account's recipients a short text and HTML note, values escaped", async () => {
    const olga = uniqueEmail('olga');
    const ivan = uniqueEmail('ivan');
    const foreign = uniqueEmail('foreign');
    await t.a.post('/notification-recipient/save', { email_address: olga, email_owner: 'Olga <b>' });
    await t.a.post('/notification-recipient/save', { email_address: ivan, email_owner: 'Ivan' });
    await t.b.post('/notification-recipient/save', { email_address: foreign, email_owner: 'Bob' });
    const queued = await enqueueEvent(t.database.db, t.app.deps, t.a.keys!.user_id, 'single_send.completed', {
      single_send_name: 'Spring <sale>',
      delivered: 10,
      meta: { a: 1 },
    });
    assert.equal(queued, 2);
    assert.equal(await drainQueue(t), 2);
    const m = sink.to(olga)[0];
    assert.ok(m, 'olga got the note');
    assert.equal(sink.to(ivan).length, 1);
    assert.equal(m.subject, '[Campaign API] Single send completed');
    assert.equal(m.header('x-campaign-event'), 'single_send.completed');
    assert.match(m.text!, /^Hello Olga <b>,/);
    assert.ok(m.text!.includes('single_send_name: Spring <sale>'));
    assert.ok(m.text!.includes('delivered: 10'));
    assert.ok(m.text!.includes('meta: {"a":1}'));
    assert.ok(m.html!.includes('Hello Olga &lt;b&gt;,'));
    assert.ok(m.html!.includes('Spring &lt;sale&gt;'));
    assert.equal(m.envelope.to.length, 1, 'one mail per recipient: addresses are not shared');
    assert.equal(sink.to(foreign).length, 0);
  });

  it('mails each recipient when a CSV import finishes (contacts.imported), with the summary', async () => {
    const watcher = uniqueEmail('import');
    await t.a.post('/notification-recipient/save', { email_address: watcher, email_owner: 'Imre' });
    const type = await t.a.post('/contacts-type/add', { name: `Imported ${seq}` });
    const boundary = '----n' + seq;
    const csv = 'email,country\nimp1@example.com,101\nimp2@example.com,IN\nbroken,101\n';
    const payload =
      `--${boundary}\r\nContent-Disposition: form-data; name="contact_type_id"\r\n\r\n${type.body.id}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="c.csv"\r\nContent-Type: text/csv\r\n\r\n${csv}\r\n--${boundary}--\r\n`;
    const r = await t.a.request('POST', '/contacts/upload-csv', {
      payload,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    assert.equal(r.status, 200, r.text);
    await drainQueue(t);
    const [m] = sink.to(watcher);
    assert.ok(m, 'the watcher got the note');
    assert.equal(m.subject, '[Campaign API] Contacts imported');
    assert.equal(m.header('x-campaign-event'), 'contacts.imported');
    assert.ok(m.text!.includes('created: 2'), m.text ?? '');
    assert.ok(m.text!.includes('skipped: 1'), m.text ?? '');
  });

  it('queues the notes in the transaction of the change: nothing when it rolls back, nothing sent before a worker runs', async () => {
    const rolled = uniqueEmail('rolled');
    const u = await setup({}, { smtpUrl: sink.url });
    try {
      await u.a.post('/notification-recipient/save', { email_address: rolled, email_owner: 'Rolf' });
      const userId = u.a.keys!.user_id;
      await assert.rejects(
        u.database.db.transaction().execute(async (trx) => {
          assert.equal(await enqueueEvent(trx, u.app.deps, userId, 'automation.live', { automation_name: 'Welcome' }), 1);
          throw new Error('the change fails');
        }),
        /the change fails/,
      );
      const count = async () => (await u.database.db.selectFrom('mail_messages').select('id').where('email', '=', rolled).execute()).length;
      assert.equal(await count(), 0, 'rolled back with the change');
      await u.database.db
        .transaction()
        .execute((trx) => enqueueEvent(trx, u.app.deps, userId, 'automation.live', { automation_name: 'Welcome' }));
      assert.equal(await count(), 1);
      assert.equal(sink.to(rolled).length, 0, 'queued, not sent: a worker sends it');
      await drainQueue(u);
      assert.equal(sink.to(rolled)[0]?.subject, '[Campaign API] Automation set live');
      assert.equal(
        await enqueueEvent(u.database.db, u.app.deps, u.b.keys!.user_id, 'contacts.imported', { created: 1 }),
        0,
        'no recipients, no mail',
      );
    } finally {
      await u.close();
    }
  });

  it('a failing transport does not reach the caller: the queue keeps the note and gives up after a permanent failure', async () => {
    const failing: Transport = {
      send: async () => {
        throw new TransportError('550 no', true, 550);
      },
      verify: async () => {},
      close: async () => {},
    };
    const u = await setup({}, { transport: failing });
    try {
      const doomed = uniqueEmail('doomed');
      await u.a.post('/notification-recipient/save', { email_address: doomed, email_owner: 'X' });
      assert.equal(await enqueueEvent(u.database.db, u.app.deps, u.a.keys!.user_id, 'automation.paused', {}), 1);
      await drainQueue(u);
      const row = await u.database.db.selectFrom('mail_messages').selectAll().where('email', '=', doomed).executeTakeFirstOrThrow();
      assert.equal(row.state, 'bounced');
      assert.equal(row.last_error, '550 no');
    } finally {
      await u.close();
    }
  });
});
