import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { drainQueue, freshDatabase, kindsRendering, setupWithSink, type TestContext } from '../helpers.js';
import type { SmtpSink } from '../support/smtp-sink.js';
import type { Database, Db } from '../../src/db/index.js';
import { createAccount } from '../../src/modules/accounts/accounts.service.js';
import { enqueueSystemMail } from '../../src/modules/notifications/notifications.mail.js';
import { isSuppressed, skipsAmong, suppressedSql, type SkipReason } from '../../src/suppression/suppression.reads.js';
import { erasureHash, suppressAddress, type AccountAddress } from '../../src/suppression/suppression.writes.js';
import { applyAddressEvents } from '../../src/suppression/suppression.policy.js';
import { testClock } from '../../src/util/clock.js';
import { isoMicros } from '../../src/util/time.js';
import { insertSingleSend, queueSendMessage, systemMail } from '../messages/queue.helpers.js';

const SECRET = 'test-secret';
const now = new Date('2030-01-01T00:00:00.000Z');

let groups = 0;

/** A group of the account; returns its id. */
async function makeGroup(db: Db, userId: number, name: string): Promise<number> {
  const at = isoMicros(now);
  const row = await db
    .insertInto('unsubscribe_groups')
    .values({
      user_id: userId,
      rand_id: `${userId}0${++groups}`,
      group_name: name,
      description: name,
      is_display: 1,
      created_at: at,
      updated_at: at,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Erases the address for the account, as an erasure leaves it: only its keyed hash. */
async function erase(db: Db, userId: number, email: string): Promise<void> {
  await db
    .insertInto('erased_addresses')
    .values({ user_id: userId, hash: erasureHash(SECRET, email), created_at: isoMicros(now) })
    .execute();
}

const address = (user_id: number, email: string): AccountAddress => ({ user_id, email, email_key: email.toLowerCase() });

/**
 * The fixture every test reads: account A's addresses in each state, and account B's entries for
 * `clean@` that must not count for A.
 */
async function fixture(db: Db, a: number, b: number) {
  const group = await makeGroup(db, a, 'News');
  const otherGroup = await makeGroup(db, a, 'Offers');
  await applyAddressEvents(db, [{ type: 'unsubscribe', address: address(a, 'Global@example.com'), groupId: null }], now);
  await applyAddressEvents(db, [{ type: 'unsubscribe', address: address(a, 'grouped@example.com'), groupId: group }], now);
  await suppressAddress(db, address(a, 'hard@example.com'), 'hard_bounce', '550 5.1.1 user unknown', now);
  for (let i = 0; i < 2; i++)
    await applyAddressEvents(db, [{ type: 'soft_bounce', address: address(a, 'soft2@example.com'), detail: 'mailbox full' }], now);
  for (let i = 0; i < 3; i++)
    await applyAddressEvents(db, [{ type: 'soft_bounce', address: address(a, 'soft3@example.com'), detail: 'mailbox full' }], now);
  // A complaint, as the intake applies it: the global list and the suppression list.
  await applyAddressEvents(db, [{ type: 'unsubscribe', address: address(a, 'complained@example.com'), groupId: null }], now);
  await suppressAddress(db, address(a, 'complained@example.com'), 'complaint', 'abuse report', now);
  await erase(db, a, 'erased@example.com');
  // Another account's entries never count for A.
  const bGroup = await makeGroup(db, b, 'B news');
  await applyAddressEvents(db, [{ type: 'unsubscribe', address: address(b, 'clean@example.com'), groupId: null }], now);
  await applyAddressEvents(db, [{ type: 'unsubscribe', address: address(b, 'clean@example.com'), groupId: bGroup }], now);
  await suppressAddress(db, address(b, 'clean@example.com'), 'hard_bounce', null, now);
  await erase(db, b, 'clean@example.com');
  return { group, otherGroup };
}

const KEYS = [
  'global@example.com',
  'grouped@example.com',
  'hard@example.com',
  'soft2@example.com',
  'soft3@example.com',
  'complained@example.com',
  'erased@example.com',
  'clean@example.com',
];

/** The SQL condition's answer for each key, in one statement. */
async function fragmentSays(db: Db, userId: number, groupId: number | null): Promise<Record<string, boolean>> {
  const keys = sql.join(
    KEYS.map((k) => sql`select ${k} as email_key`),
    sql` union all `,
  );
  const { rows } = await sql<{ email_key: string; hit: unknown }>`
    select k.email_key, ${suppressedSql(userId, groupId, sql.ref('k.email_key'))} as hit from (${keys}) k`.execute(db);
  return Object.fromEntries(rows.map((r) => [r.email_key, r.hit === true || Number(r.hit) === 1]));
}

/** The batch check's answer for each key, for mail under `lists`. */
async function batchSays(db: Db, userId: number, lists: { group: number | null } | null): Promise<Record<string, SkipReason | null>> {
  const why = await skipsAmong(
    db,
    KEYS.map((email_key) => ({ user_id: userId, email_key, lists })),
    SECRET,
  );
  return Object.fromEntries(KEYS.map((k, i) => [k, why[i]]));
}

describe('suppression: the two reads agree on one fixture', () => {
  let database: Database;
  let drop: () => Promise<void>;
  let a: number;
  let b: number;
  let group: number;
  let otherGroup: number;

  before(async () => {
    ({ database, drop } = await freshDatabase());
    a = (await createAccount(database.db, 'A')).user_id;
    b = (await createAccount(database.db, 'B')).user_id;
    ({ group, otherGroup } = await fixture(database.db, a, b));
  });
  after(() => drop());

  it('the batch check names each reason, for mail under a group', async () => {
    assert.deepEqual(await batchSays(database.db, a, { group }), {
      'global@example.com': 'unsubscribed',
      'grouped@example.com': 'unsubscribed_from_group',
      'hard@example.com': 'hard_bounce',
      'soft2@example.com': null,
      'soft3@example.com': 'soft_bounces',
      'complained@example.com': 'complaint',
      'erased@example.com': 'erased',
      'clean@example.com': null,
    });
  });

  it('a group unsubscribe stops only its own group; the service’s own mail ignores unsubscribes but not suppressions', async () => {
    const other = await batchSays(database.db, a, { group: otherGroup });
    assert.equal(other['grouped@example.com'], null);
    assert.equal((await batchSays(database.db, a, { group: null }))['grouped@example.com'], null);
    assert.deepEqual(await batchSays(database.db, a, null), {
      'global@example.com': null,
      'grouped@example.com': null,
      'hard@example.com': 'hard_bounce',
      'soft2@example.com': null,
      'soft3@example.com': 'soft_bounces',
      'complained@example.com': 'complaint',
      'erased@example.com': 'erased',
      'clean@example.com': null,
    });
  });

  it('the SQL condition agrees with the batch check on every address but the erased one (checked in the batch only)', async () => {
    for (const g of [group, otherGroup, null]) {
      const fragment = await fragmentSays(database.db, a, g);
      const batch = await batchSays(database.db, a, { group: g });
      for (const k of KEYS) {
        const expected = k === 'erased@example.com' ? false : batch[k] !== null;
        assert.equal(fragment[k], expected, `${k} under group ${g}`);
      }
    }
    assert.equal(await isSuppressed(database.db, a, ' Hard@Example.com '), true);
    assert.equal(await isSuppressed(database.db, a, 'grouped@example.com'), false);
    assert.equal(await isSuppressed(database.db, a, 'grouped@example.com', group), true);
    assert.equal(await isSuppressed(database.db, b, 'global@example.com'), false);
  });

  it('stores each reason as the API shows it, complaints as `complaint`; an address keeps its first reason', async () => {
    const rows = await database.db
      .selectFrom('suppressions')
      .select(['email', 'reason'])
      .where('user_id', '=', a)
      .orderBy('email')
      .execute();
    assert.deepEqual(rows, [
      { email: 'complained@example.com', reason: 'complaint' },
      { email: 'hard@example.com', reason: 'hard_bounce' },
      { email: 'soft3@example.com', reason: 'soft_bounces' },
    ]);
    assert.equal(await suppressAddress(database.db, address(a, 'HARD@example.com'), 'complaint', null, now), false);
  });
});

describe('suppression: the mail lane checks every claimed batch once, before rendering', () => {
  const clock = testClock('2030-01-01T00:00:00.000Z');
  let t: TestContext;
  let sink: SmtpSink;
  let a: number;
  let sendGroup: number;
  const rendered: string[] = [];

  before(async () => {
    ({ sink, ...t } = await setupWithSink({ appSecret: SECRET }, { clock }));
    a = t.a.keys!.user_id;
    ({ group: sendGroup } = await fixture(t.database.db, a, t.b.keys!.user_id));
  });
  after(() => t.close());

  it('campaign mail skips every kind of suppression with its reason; the renderer never sees those rows', async () => {
    const sendId = await insertSingleSend(t.database.db, a);
    await t.database.db.updateTable('single_sends').set({ unsubscribe_group_id: sendGroup }).where('id', '=', sendId).execute();
    for (const k of KEYS) await queueSendMessage(t.database.db, a, sendId, k, clock.now());
    const kinds = kindsRendering('single_send', async (_deps, rows) =>
      rows.map((r) => {
        rendered.push(r.email_key);
        return { message: systemMail(r.email) };
      }),
    );
    await drainQueue(t, { kinds });
    assert.deepEqual(rendered.sort(), ['clean@example.com', 'soft2@example.com']);
    const states = await t.database.db
      .selectFrom('mail_messages')
      .select(['email', 'state', 'last_error'])
      .where('single_send_id', '=', sendId)
      .orderBy('email')
      .execute();
    assert.deepEqual(states, [
      { email: 'clean@example.com', state: 'sent', last_error: null },
      { email: 'complained@example.com', state: 'suppressed', last_error: 'the address complained of a message (spam report)' },
      { email: 'erased@example.com', state: 'suppressed', last_error: 'the address was erased by the account' },
      { email: 'global@example.com', state: 'suppressed', last_error: 'unsubscribed from every mail' },
      { email: 'grouped@example.com', state: 'suppressed', last_error: 'unsubscribed from the unsubscribe group' },
      { email: 'hard@example.com', state: 'suppressed', last_error: 'the address bounced before' },
      { email: 'soft2@example.com', state: 'sent', last_error: null },
      { email: 'soft3@example.com', state: 'suppressed', last_error: 'the address bounced before' },
    ]);
  });

  it('the service’s own mail still reaches an unsubscribed address, never a suppressed or erased one', async () => {
    for (const k of ['global@example.com', 'grouped@example.com', 'hard@example.com', 'erased@example.com'])
      await enqueueSystemMail(t.database.db, a, systemMail(k), clock.now());
    await drainQueue(t);
    const system = await t.database.db
      .selectFrom('mail_messages')
      .select(['email', 'state'])
      .where('kind', '=', 'system')
      .orderBy('email')
      .execute();
    assert.deepEqual(system, [
      { email: 'erased@example.com', state: 'suppressed' },
      { email: 'global@example.com', state: 'sent' },
      { email: 'grouped@example.com', state: 'sent' },
      { email: 'hard@example.com', state: 'suppressed' },
    ]);
    assert.equal(sink.to('global@example.com').length, 1);
    assert.equal(sink.to('hard@example.com').length, 0);
  });
});
