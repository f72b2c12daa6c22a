/**
 * Erasure leaves no copy behind: not in a segment's conditions, not in a stored webhook event's
 * body, not in the outbox folder, and (SQLite) not in the freed space of the database file or its
 * WAL. The app runs on a real SQLite file in a temporary folder (or a fresh PostgreSQL database)
 * and sends through the outbox transport.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { simpleParser } from 'mailparser';
import { emitEvents } from '../../src/events/outbox.js';
import { replaceAddress } from '../../src/modules/contacts/contacts.privacy.copies.js';
import { erasureHash } from '../../src/suppression/suppression.writes.js';
import { testClock } from '../../src/util/clock.js';
import { isoMicros } from '../../src/util/time.js';
import { drainQueue, ENGINE, make, setup } from '../helpers.js';
import { createSegment } from './segments.helpers.js';
import { createSend, group, sendForm, typeWith, verifiedSender, type SendsContext } from './single-sends.helpers.js';

const ADDRESS = 'Quinn.Residue-3@Erase.Example';
const KEY = ADDRESS.toLowerCase();
const MARKER = `erased:${erasureHash('test-secret', KEY)}`;

/** Whether the bytes hold the address in any letter case. */
const holds = (bytes: Buffer) => bytes.toString('latin1').toLowerCase().includes(KEY);

/** `setup` with the database in the SQLite file `dir/campaign.db` (or a fresh PostgreSQL database), mail to `dir/outbox`. */
async function setupOnFile(dir: string): Promise<SendsContext> {
  const clock = testClock('2030-01-15T10:00:00.000Z');
  const env = { DATA_DIR: dir, PUBLIC_URL: 'https://mail.example.test' };
  return { ...(await setup({}, { env, clock, sqliteFile: join(dir, 'campaign.db') })), clock };
}

/** The outbox files (full paths) whose bytes hold the address. */
function outboxFilesHolding(t: SendsContext): string[] {
  const files = readdirSync(t.config.outboxDir).map((f) => join(t.config.outboxDir, f));
  return files.filter((f) => holds(readFileSync(f)));
}

describe('erasure leaves no copy of the address', () => {
  const dir = mkdtempSync(join(tmpdir(), 'campaign-residue-'));
  let t: SendsContext;
  let segment: number;
  let type: number;
  let sender: number;

  before(async () => {
    t = await setupOnFile(dir);
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
    sender = await verifiedSender(t, t.a);
    const grp = await group(t.a);
    ({ type } = await typeWith(t.a, [[ADDRESS, 'Quinn']]));
    await make.contact(t.a, { contact_type_id: type, email: 'quinn.friend@example.com', first_name: 'Friend' });

    // A confirmed sign-up through a form: its consent row, its confirmation mail in the outbox.
    const form = await t.a.post('/forms/create', { name: 'News', contact_type_id: type, sender_id: sender, fields: ['first_name'] });
    assert.equal(form.status, 200, form.text);
    const posted = await t.anon.request('POST', `/subscribe/${form.body.id}`, { form: { email: ADDRESS, first_name: 'Quinn' } });
    assert.equal(posted.status, 200, posted.text);
    await drainQueue(t);
    const [confirmation] = await Promise.all(outboxFilesHolding(t).map((f) => simpleParser(readFileSync(f))));
    const link = /https?:\/\/[^/\s]+(\/subscribe\/confirm\/[A-Za-z0-9_.-]+)/.exec(confirmation.text ?? '')![1];
    assert.equal((await t.anon.request('POST', link, { form: {} })).status, 200);

    // Conditions naming the address, in any letter case, among other values.
    segment = await createSegment(t.a, {
      contact_type_id: type,
      select_field: ['email', 'first_name', 'last_name'],
      select_operator: ['is', 'is', 'contains'],
      value: [ADDRESS, 'Friend', `${ADDRESS.toUpperCase()} or not`],
      query_type: 'or',
    });
    // A single send delivered to the outbox (its `message.delivered` event waits for the endpoint).
    await createSend(t.a, sendForm({ sender, group: grp, type }));
    await drainQueue(t);
    // An event about something else whose body quotes the address.
    await t.database.db
      .transaction()
      .execute((trx) =>
        emitEvents(trx, t.clock.now(), [{ userId: t.a.keys!.user_id, type: 'contacts.imported', data: { note: `from ${ADDRESS}` } }]),
      );
    assert.ok(outboxFilesHolding(t).length >= 2, 'the confirmation and the send are in the outbox');
    if (ENGINE === 'sqlite') {
      const file = join(dir, 'campaign.db');
      assert.ok(holds(Buffer.concat([readFileSync(file), readFileSync(`${file}-wal`)])), 'the database holds the address before');
    }
  });
  after(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('replaces the address in conditions and event bodies, and removes the outbox files naming it', async () => {
    const r = await t.a.delete('/contacts/erase', { email: KEY });
    assert.deepEqual(r.body, { status: 'success', message: 'Erased Successfully' });

    const row = await t.database.db.selectFrom('segments').select('value').where('id', '=', segment).executeTakeFirstOrThrow();
    assert.deepEqual(JSON.parse(row.value), [MARKER, 'Friend', `${MARKER} or not`]);
    // The condition now matches no one; the friend stays a member by the other one.
    const members = (await t.a.get('/segment/email/list', { segment_id: segment })).body.message.contactEmails;
    assert.deepEqual(
      members.map((m: { email: string }) => m.email),
      ['quinn.friend@example.com'],
    );

    const bodies = await t.database.db
      .selectFrom('webhook_events')
      .select(['type', 'body'])
      .where('user_id', '=', t.a.keys!.user_id)
      .execute();
    assert.ok(bodies.length > 0);
    assert.deepEqual(
      bodies.filter((e) => e.body.toLowerCase().includes(KEY)),
      [],
    );
    const note = bodies.find((e) => e.type === 'contacts.imported')!;
    assert.equal(JSON.parse(note.body).data.note, `from ${MARKER}`);

    assert.deepEqual(outboxFilesHolding(t), []);
    assert.ok(readdirSync(t.config.outboxDir).length > 0, "the other recipients' mail stays");
  });

  // The erasure itself checkpoints the WAL: no checkpoint of the test's own.
  test('SQLite: neither the database file nor its WAL holds the address after the erasure', { skip: ENGINE !== 'sqlite' }, async () => {
    const file = join(dir, 'campaign.db');
    assert.equal(holds(readFileSync(file)), false, 'the database file');
    assert.equal(holds(readFileSync(`${file}-wal`)), false, 'the WAL');
  });

  test("keeps another account's outbox files naming the address", async () => {
    const b = await typeWith(t.b, [[ADDRESS, 'Quinn']]);
    await createSend(t.b, sendForm({ sender: await verifiedSender(t, t.b), group: await group(t.b), type: b.type }));
    await drainQueue(t);
    const theirs = outboxFilesHolding(t);
    assert.equal(theirs.length, 1);
    // Account A holds the address again (added back), and erases it again.
    await make.contact(t.a, { contact_type_id: type, email: ADDRESS });
    assert.equal((await t.a.delete('/contacts/erase', { email: ADDRESS })).status, 200);
    assert.deepEqual(outboxFilesHolding(t), theirs);
  });
});

test('replaces the whole address in any letter case, never a part of a longer one', () => {
  const key = 'bob@x.org';
  assert.equal(replaceAddress('Bob@X.org, <BOB@x.ORG>; "bob@x.org".', key, 'E'), 'E, <E>; "E".');
  for (const other of ['jimbob@x.org', 'jim.bob@x.org', 'bob@x.org.uk', 'bob@x.organic', 'bob@x.org-b.net']) {
    assert.equal(replaceAddress(other, key, 'E'), other);
  }
  assert.equal(replaceAddress('a+b@x.org', 'a+b@x.org', 'E'), 'E', 'characters special to patterns are literal');
});
