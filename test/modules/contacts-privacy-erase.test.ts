import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { emitEvents } from '../../src/events/outbox.js';
import { isoMicros } from '../../src/util/time.js';
import { assertNeedsKeys, drainQueue, ENGINE, fieldErrors, make } from '../helpers.js';
import { act, automationWith } from './automations-delivery.helpers.js';
import { DESIGN, messageTo, ok, oneClickUnsubscribe, openAndClick } from './contacts-privacy.helpers.js';
import { createSegment } from './segments.helpers.js';
import { createSend, group, Rnf, sendForm, setupSends, typeWith, verifiedSender, type SendsContext } from './single-sends.helpers.js';

/** A distinctive address: any column that still holds it after the erasure is found by the scan. */
const ADDRESS = 'Zed.Erasure-7@Privacy.Example';
const KEY = ADDRESS.toLowerCase();

/** Every column of every table of the database (tables added by later migrations included). */
async function everyColumn(t: SendsContext): Promise<Array<{ table: string; column: string }>> {
  const db = t.database.db;
  if (ENGINE === 'postgres') {
    const { rows } = await sql<{ table: string; column: string }>`
      select table_name as "table", column_name as "column" from information_schema.columns
      where table_schema = current_schema() order by table_name, ordinal_position`.execute(db);
    return rows;
  }
  const tables = await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(db);
  const out: Array<{ table: string; column: string }> = [];
  for (const { name } of tables.rows) {
    const cols = await sql<{ name: string }>`select name from pragma_table_info(${name})`.execute(db);
    out.push(...cols.rows.map((c) => ({ table: name, column: c.name })));
  }
  return out;
}

/**
 * The columns (as `table.column: rows`) where the address still appears in any letter case, in
 * rows of account `userId` (tables without `user_id`: in any row).
 */
async function scanFor(t: SendsContext, address: string, userId: number): Promise<string[]> {
  const columns = await everyColumn(t);
  const hasUser = new Set(columns.filter((c) => c.column === 'user_id').map((c) => c.table));
  const found: string[] = [];
  for (const { table, column } of columns) {
    const { rows } = await sql<{ n: number | string }>`
      select count(*) as n from ${sql.table(table)}
      where lower(cast(${sql.ref(column)} as text)) like ${`%${address.toLowerCase()}%`}
      ${hasUser.has(table) ? sql`and (user_id = ${userId} or user_id is null)` : sql``}`.execute(t.database.db);
    if (Number(rows[0].n) > 0) found.push(`${table}.${column}: ${rows[0].n}`);
  }
  return found;
}

describe('DELETE /contacts/erase', () => {
  let t: SendsContext;
  let sender: number;
  let grp: number;
  let utr: string;
  let auto: string;
  let statsBefore: unknown;

  /** The statistics the erasure must keep: the send's and automation's counters, links, hourly engagement. */
  async function statistics() {
    const db = t.database.db;
    // Without `unique_open_token`: it names each opener by address (an erased one by its marker).
    const { unique_open_token: _s, ...send } = (await t.a.get('/single-send/details', { utr })).body.message.singleSend[0];
    const { unique_open_token: _a, ...automation } = (await t.a.get('/automations/details', { utr: auto })).body.message.automation;
    return {
      send,
      automation,
      links: await db.selectFrom('tracked_links').select(['id', 'unique_clicks', 'total_clicks']).orderBy('id').execute(),
      hours: await db.selectFrom('engagement_hours').selectAll().orderBy('source_table').orderBy('source_id').orderBy('hour').execute(),
    };
  }

  before(async () => {
    t = await setupSends({ sink: true, env: { TRUST_PROXY: '127.0.0.1' } });
    sender = await verifiedSender(t, t.a);
    grp = await group(t.a);
    const now = isoMicros(t.clock.now());
    await t.database.db
      .insertInto('webhook_endpoints')
      .values({
        user_id: t.a.keys!.user_id,
        url: 'https://hooks.example.test/in',
        events: '["*"]',
        secret: 'whsec_x',
        created_at: now,
        updated_at: now,
      })
      .execute();

    // Account A: a notification recipient, a live welcome automation, then the contact joins.
    await ok(t.a, 'POST', '/notification-recipient/save', { email_address: ADDRESS, email_owner: 'Zed' });
    const { type } = await typeWith(t.a, []);
    auto = await automationWith(t.a, { type: 'welcome', target: `contacts_${type}`, group: grp, sender, emails: [{ subject: 'Welcome' }] });
    await act(t.a, '/automations/set-live', auto);
    await make.contact(t.a, { contact_type_id: type, email: ADDRESS, first_name: 'Zed', alt_email: 'zed.other@example.com' });
    await make.contact(t.a, { contact_type_id: type, email: 'friend@example.com', first_name: 'Friend', alt_email: KEY });
    // A sign-up through a form, confirmed (its consent is kept with the contact), and one through another form, pending.
    const signUp = async (name: string) => {
      const form = await t.a.post('/forms/create', { name, contact_type_id: type, sender_id: sender, fields: ['first_name'] });
      assert.equal(form.status, 200, form.text);
      const posted = await t.anon.request('POST', `/subscribe/${form.body.id}`, {
        form: { email: ADDRESS, first_name: 'Zed' },
        headers: { 'x-forwarded-for': '203.0.113.7' },
      });
      assert.equal(posted.status, 200, posted.text);
    };
    await signUp('News');
    await drainQueue(t);
    const link = t
      .sink!.to(KEY)
      .map((m) => /https?:\/\/[^/\s]+(\/subscribe\/confirm\/[A-Za-z0-9_.-]+)/.exec(m.text ?? '')?.[1])
      .find(Boolean)!;
    assert.equal((await t.anon.request('POST', link, { form: {}, headers: { 'x-forwarded-for': '198.51.100.9' } })).status, 200);
    const consents = (await t.a.get('/contacts/export', { email: ADDRESS })).body.message.consents;
    assert.deepEqual(
      consents.map((c: { form_name: string; signup_ip: string; confirm_ip: string }) => [c.form_name, c.signup_ip, c.confirm_ip]),
      [['News', '203.0.113.7', '198.51.100.9']],
    );
    await signUp('Offers');
    const seg = await createSegment(t.a, {
      contact_type_id: type,
      select_field: ['first_name'],
      select_operator: ['is'],
      value: ['Nobody'],
    });
    await ok(t.a, 'POST', '/segment/email/store', { segment_id: seg, first_name: 'Zed', last_name: 'Hand', email: ADDRESS });
    utr = await createSend(t.a, sendForm({ sender, group: grp, type }, { template_html: DESIGN }));
    await ok(t.a, 'POST', '/single/send/test', { utr, emails: [ADDRESS] });

    // Account B holds the same address.
    const b = await typeWith(t.b, [[ADDRESS, 'Zed']]);
    const bGroup = await group(t.b);
    await createSend(t.b, sendForm({ sender: await verifiedSender(t, t.b), group: bGroup, type: b.type }));
    await drainQueue(t);
    await ok(t.b, 'POST', '/global-unsubscribes/save', { email_address: ADDRESS });

    // A's mail is opened, clicked, unsubscribed from, bounced; an event about it waits in the outbox.
    const row = await messageTo(t, utr, KEY);
    assert.equal(row.state, 'sent');
    await openAndClick(t, Number(row.id), ADDRESS);
    await oneClickUnsubscribe(t, Number(row.id));
    await ok(t.a, 'POST', '/global-unsubscribes/save', { email_address: ADDRESS });
    await ok(t.a, 'POST', '/bounces/report', { email: ADDRESS, type: 'soft', reason: `452 4.2.2 mailbox of ${ADDRESS} full` });
    await ok(t.a, 'POST', '/bounces/report', {
      email: ADDRESS,
      type: 'hard',
      reason: `550 5.1.1 <${ADDRESS}> unknown`,
      message_id: row.message_id,
    });
    await t.database.db
      .transaction()
      .execute((trx) =>
        emitEvents(trx, t.clock.now(), [
          { userId: t.a.keys!.user_id, type: 'message.opened', data: { email: ADDRESS, utr, source: 'single_send' }, email: ADDRESS },
        ]),
      );
    // Amazon SES names its events `<feedback id>:<address>`: the de-duplication key of one taken in.
    await t.database.db
      .insertInto('inbound_events')
      .values({ event_key: `0100018f-feedback:${ADDRESS}`, created_at: now })
      .execute();
    // An answer kept for an Idempotency-Key retry that names the address (a body as an answer could hold it).
    await t.database.db
      .insertInto('idempotency_keys')
      .values({
        user_id: t.a.keys!.user_id,
        key: 'retry-1',
        request_hash: 'h',
        state: 'done',
        status: 200,
        headers: '{}',
        body: JSON.stringify({ status: 'success', message: { email: ADDRESS } }),
        created_at: now,
        expires_at: isoMicros(new Date(Date.now() + 86_400_000)),
      })
      .execute();
    // A system mail still waiting in the queue (its payload holds the whole message).
    await ok(t.a, 'POST', '/single/send/test', { utr, emails: ['someone@example.com', ADDRESS] });

    // Before the erasure, the scan finds the address wherever the account keeps it.
    const tables = new Set((await scanFor(t, ADDRESS, t.a.keys!.user_id)).map((c) => c.split('.')[0]));
    assert.deepEqual([...tables].sort(), [
      'automation_enrollments',
      'contact_consents',
      'contacts',
      'idempotency_keys',
      'inbound_events',
      'mail_messages',
      'notification_recipients',
      'segment_recipients',
      'signup_pending',
      'soft_bounces',
      'suppressions',
      'unsubscribers',
      'webhook_events',
    ]);
    statsBefore = await statistics();
  });
  after(() => t.close());

  test('needs keys, checks the address, and answers Record not found for an address the account does not hold', async () => {
    await assertNeedsKeys(t.anon, [['DELETE', '/contacts/erase?email=a@example.com']]);
    assert.deepEqual((await t.a.delete('/contacts/erase')).body, fieldErrors({ email: ['The email field is required.'] }));
    assert.deepEqual(
      (await t.a.delete('/contacts/erase', { email: 'nope' })).body,
      fieldErrors({ email: ['The email must be a valid email address.'] }),
    );
    const r = await t.a.delete('/contacts/erase', { email: 'nobody@example.com' });
    assert.equal(r.status, 404);
    assert.deepEqual(r.body, Rnf);
    await make.contact(t.b, { email: 'b.only@example.com' });
    assert.deepEqual((await t.a.delete('/contacts/erase', { email: 'b.only@example.com' })).body, Rnf);
    assert.equal((await t.b.get('/contacts/export', { email: 'b.only@example.com' })).status, 200);
  });

  test('erases every copy of the address in the account; statistics and the other account stay', async () => {
    const r = await t.a.delete('/contacts/erase', { email: KEY });
    assert.deepEqual(r.body, { status: 'success', message: 'Erased Successfully' });

    assert.deepEqual(await scanFor(t, ADDRESS, t.a.keys!.user_id), [], 'no column of the account holds the address');
    assert.deepEqual(await statistics(), statsBefore);

    // The queue rows keep their counts under a marker; the unsent ones are cancelled.
    const rows = await t.database.db
      .selectFrom('mail_messages')
      .select(['id', 'email', 'email_key', 'state', 'opens', 'clicks', 'payload'])
      .where('user_id', '=', t.a.keys!.user_id)
      .where('email', 'like', 'erased:%')
      .orderBy('id')
      .execute();
    assert.ok(rows.length >= 4, `${rows.length} rows`);
    for (const m of rows) {
      assert.equal(m.email, `erased:${m.id}`);
      assert.equal(m.email_key, m.email);
      assert.equal(m.payload, null);
      assert.notEqual(m.state, 'queued');
    }
    assert.ok(rows.some((m) => m.opens === 1 && m.clicks === 1));
    // The events about the address are gone, with their deliveries; the account's other events stay.
    const events = t.database.db.selectFrom('webhook_events').where('user_id', '=', t.a.keys!.user_id);
    assert.equal((await events.select('id').where('email_key', '=', KEY).execute()).length, 0);
    const left = await events.select('id').execute();
    assert.ok(left.length > 0);
    const deliveries = await t.database.db.selectFrom('webhook_deliveries').select('event_id').execute();
    assert.deepEqual(new Set(deliveries.map((d) => d.event_id)), new Set(left.map((e) => e.id)));
    assert.equal((await t.database.db.selectFrom('erased_addresses').selectAll().execute()).length, 1);
    // The other contact of the account keeps its record, without the address as its alt_email.
    const friend = (await t.a.get('/contacts/list')).body.message.contacts;
    assert.deepEqual(
      friend.map((c: { email: string; alt_email: string | null }) => [c.email, c.alt_email]),
      [['friend@example.com', null]],
    );

    // Account B's copy is untouched.
    const theirs = await scanFor(t, ADDRESS, t.b.keys!.user_id);
    assert.ok(theirs.includes('contacts.email: 1') && theirs.some((c) => c.startsWith('mail_messages.email:')), theirs.join(', '));
    const exported = await t.b.get('/contacts/export', { email: ADDRESS });
    assert.equal(exported.status, 200);
    assert.equal(exported.body.message.unsubscribes.global, true);

    // Nothing is left to export or erase.
    assert.deepEqual((await t.a.get('/contacts/export', { email: ADDRESS })).body, Rnf);
    assert.deepEqual((await t.a.delete('/contacts/erase', { email: ADDRESS })).body, Rnf);
  });

  test('the account never mails the erased address again, whatever the mail; the other account still can', async () => {
    const before = t.sink!.to(ADDRESS).length;
    // Added back: a contact again, in a new list, sent a new single send and a test.
    const { type } = await typeWith(t.a, [
      [ADDRESS.toUpperCase(), 'Back'],
      ['kept@example.com', 'Kept'],
    ]);
    const again = await createSend(t.a, sendForm({ sender, group: grp, type }, { single_send_name: 'Again' }));
    await ok(t.a, 'POST', '/single/send/test', { utr: again, emails: [ADDRESS] });
    await ok(t.a, 'POST', '/notification-recipient/save', { email_address: ADDRESS, email_owner: 'Zed again' });
    await act(t.a, '/automations/pause', auto);
    await drainQueue(t);
    assert.equal(t.sink!.to('kept@example.com').length, 1, 'the send went to the others');
    assert.equal(t.sink!.to(ADDRESS).length, before, 'nothing more reached the erased address');
    const row = await messageTo(t, again, KEY);
    assert.equal(row.state, 'suppressed');
    const system = await t.database.db
      .selectFrom('mail_messages')
      .select(['kind', 'state'])
      .where('user_id', '=', t.a.keys!.user_id)
      .where('email_key', '=', KEY)
      .where('kind', '!=', 'single_send')
      .execute();
    assert.ok(system.length >= 2, 'a test and a notification were queued');
    assert.ok(system.every((m) => m.state === 'suppressed'));

    // Account B lifts its own unsubscribe of the address and mails it.
    const listed = (await t.b.get('/global-unsubscribes')).body.message.unSubscribers as Array<{ id: number; email_address: string }>;
    const mine = listed.find((u) => u.email_address === ADDRESS)!;
    assert.equal((await t.b.delete('/global-unsubscribes/delete', { id: mine.id })).status, 200);
    const bType = await typeWith(t.b, [['zed.erasure-7@privacy.example', 'Zed']]);
    const bSender = await verifiedSender(t, t.b);
    await createSend(
      t.b,
      sendForm({ sender: bSender, group: await group(t.b, 'B news'), type: bType.type }, { single_send_name: 'B again' }),
    );
    await drainQueue(t);
    assert.ok(t.sink!.to(ADDRESS).length > before, 'account B still mails it');
  });
});
