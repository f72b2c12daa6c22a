/**
 * The ledger's `record` straight on the database (its producers' own tests reach it through the
 * worker, the public pages and intake): what a list of events does to the messages, the counters
 * of their send, its hours and the outgoing webhook events, all in the caller's transaction.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Database } from '../../src/db/index.js';
import { eventColumns, hourOf, record, type EventMessage, type LedgerEvent } from '../../src/messages/ledger.js';
import { MAIL_KINDS } from '../../src/mail-kinds.js';
import { createAccount } from '../../src/modules/accounts/accounts.service.js';
import { isoMicros } from '../../src/util/time.js';
import { addEndpoint, eventsSince, lastEventId } from '../events/events.helpers.js';
import { freshDatabase } from '../helpers.js';
import { seedSingleSend, type SeededSend } from '../public/seed.js';

describe('the ledger: record(trx, { kinds, now }, events)', () => {
  let database: Database;
  let drop: () => Promise<void>;
  let userId: number;
  let send: SeededSend;
  let other: SeededSend;
  let linkId: number;
  const now = new Date('2031-01-01T10:20:00Z');
  const kinds = MAIL_KINDS;

  before(async () => {
    ({ database, drop } = await freshDatabase());
    ({ user_id: userId } = await createAccount(database.db, 'Ledger'));
    send = await seedSingleSend(
      database.db,
      userId,
      Array.from({ length: 20 }, (_, i) => `r${i}@example.com`),
    );
    other = await seedSingleSend(database.db, userId, ['x@example.com']);
    const link = await database.db
      .insertInto('tracked_links')
      .values({
        user_id: userId,
        source_table: 'single_sends',
        source_id: send.sendId,
        campaign_table: 'single_sends',
        campaign_id: send.sendId,
        position: 0,
        url: 'https://shop.example.com/spring',
        created_at: isoMicros(now),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    linkId = link.id;
    await addEndpoint(database, userId);
  });
  after(() => drop());

  const inTrx = (events: LedgerEvent[], at = now) => database.db.transaction().execute((trx) => record(trx, { kinds, now: at }, events));
  const stats = (id: number) =>
    database.db
      .selectFrom('single_sends')
      .select([
        'delivered',
        'bounces',
        'hard_bounces',
        'soft_bounces',
        'spam_reports',
        'total_opens',
        'unique_opens',
        'total_clicks',
        'unique_clicks',
        'unsubscribes',
      ])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
  const hours = async (id: number) =>
    (
      await database.db
        .selectFrom('engagement_hours')
        .select(['hour', 'delivered', 'opens', 'clicks'])
        .where('source_table', '=', 'single_sends')
        .where('source_id', '=', id)
        .orderBy('hour')
        .execute()
    ).map((h) => ({ hour: h.hour, delivered: Number(h.delivered), opens: Number(h.opens), clicks: Number(h.clicks) }));
  const opensOf = async (ids: number[]) =>
    (await database.db.selectFrom('mail_messages').select(['id', 'opens']).where('id', 'in', ids).orderBy('id').execute()).map(
      (r) => r.opens,
    );
  const messageRow = (id: number) =>
    database.db
      .selectFrom('mail_messages')
      .select(eventColumns(kinds))
      .where('id', '=', id)
      .executeTakeFirstOrThrow() as Promise<EventMessage>;
  /** The change of each counter between two reads of `stats`, zeros left out. */
  const diff = (a: Record<string, number>, b: Record<string, number>) =>
    Object.fromEntries(Object.keys(a).flatMap((k) => (Number(b[k]) !== Number(a[k]) ? [[k, Number(b[k]) - Number(a[k])]] : [])));

  it('counts repeated opens of one batch, across two sends, and ignores unknown ids', async () => {
    const opens = (id: number) =>
      database.db.selectFrom('single_sends').select(['total_opens', 'unique_opens']).where('id', '=', id).executeTakeFirstOrThrow();
    const opened = (ids: number[]) => ids.map((id) => ({ type: 'opened' as const, id }));
    const [a, b] = send.messageIds;
    const x = other.messageIds[0];
    await inTrx(opened([a, b, a, x, 987_654_321, a]));
    assert.deepEqual(await opensOf([a, b]), [3, 1]);
    assert.deepEqual(await opensOf([x]), [1]);
    assert.deepEqual(await opens(send.sendId), { total_opens: 4, unique_opens: 2 });
    assert.deepEqual(await opens(other.sendId), { total_opens: 1, unique_opens: 1 });
    await inTrx(opened([b]));
    assert.deepEqual(await opens(send.sendId), { total_opens: 5, unique_opens: 2 });
  });

  it('applies a mixed list in one call: one update of the send, one hour row, the webhook events in the list order', async () => {
    const [d, o, c] = send.messageIds.slice(2, 5);
    const at = new Date('2031-02-03T04:05:06Z');
    const before = await stats(send.sendId);
    const since = await lastEventId(database);
    const url = 'https://shop.example.com/spring?who=r4';
    const result = await inTrx(
      [
        { type: 'delivered', message: await messageRow(d) },
        { type: 'opened', id: o },
        { type: 'clicked', id: c, link: linkId, url },
        { type: 'opened', id: 987_654_321 },
      ],
      at,
    );
    assert.deepEqual(
      result.map((m) => m && m.id),
      [d, o, c, null],
    );
    // The click of a message never opened counts its open too.
    assert.deepEqual(diff(before, await stats(send.sendId)), {
      delivered: 1,
      total_opens: 2,
      unique_opens: 2,
      total_clicks: 1,
      unique_clicks: 1,
    });
    assert.deepEqual(
      (await hours(send.sendId)).filter((h) => h.hour === hourOf(at)),
      [{ hour: '2031-02-03 04:00:00', delivered: 1, opens: 2, clicks: 1 }],
    );
    const link = await database.db.selectFrom('tracked_links').selectAll().where('id', '=', linkId).executeTakeFirstOrThrow();
    assert.deepEqual([link.total_clicks, link.unique_clicks], [1, 1]);
    const events = await eventsSince(database, since);
    const utr = (await database.db.selectFrom('single_sends').select('utr').where('id', '=', send.sendId).executeTakeFirstOrThrow()).utr;
    assert.deepEqual(
      events.map((e) => [e.type, e.body.data.email, e.body.data.utr, e.body.data.url]),
      [
        ['message.delivered', 'r2@example.com', utr, undefined],
        ['message.opened', 'r3@example.com', utr, undefined],
        ['message.clicked', 'r4@example.com', utr, url],
      ],
    );
  });

  it('counts a repeated event once, in the same call and in a later one', async () => {
    const [h, s, k, u] = send.messageIds.slice(5, 9);
    const before = await stats(send.sendId);
    const since = await lastEventId(database);
    const events: LedgerEvent[] = [
      { type: 'bounced', id: h, after: 'accept', bounce: 'hard', detail: '5.1.1 User unknown' },
      { type: 'bounced', id: s, after: 'accept', bounce: 'soft', detail: '4.2.2 Mailbox full' },
      { type: 'complained', id: k, detail: null },
      { type: 'unsubscribed', id: u },
    ];
    const first = await inTrx([...events, ...events]);
    assert.deepEqual(
      first.map((m) => m && m.id),
      [h, s, k, u, null, null, null, null],
    );
    assert.deepEqual((await inTrx(events)).filter(Boolean), []);
    assert.deepEqual(diff(before, await stats(send.sendId)), {
      delivered: -2,
      bounces: 2,
      hard_bounces: 1,
      soft_bounces: 1,
      spam_reports: 1,
      unsubscribes: 1,
    });
    assert.deepEqual(
      (await eventsSince(database, since)).map((e) => [e.type, e.body.data.email, e.body.data.type]),
      [
        ['message.bounced', 'r5@example.com', 'hard'],
        ['message.bounced', 'r6@example.com', 'soft'],
        ['message.complained', 'r7@example.com', undefined],
      ],
    );
    const suppressed = await database.db.selectFrom('suppressions').select(['email', 'reason']).orderBy('email').execute();
    assert.deepEqual(suppressed, [
      { email: 'r5@example.com', reason: 'hard_bounce' },
      { email: 'r7@example.com', reason: 'complaint' },
    ]);
    const soft = await database.db.selectFrom('soft_bounces').select(['email_key', 'mail_message_id']).execute();
    assert.deepEqual(soft, [{ email_key: 'r6@example.com', mail_message_id: s }]);
  });

  it('takes a bounce after the accept out of the delivered of the hour it was accepted in', async () => {
    const m = send.messageIds[9];
    const sentAt = new Date('2031-03-01T08:30:00Z');
    await database.db
      .updateTable('mail_messages')
      .set({ sent_at: isoMicros(sentAt) })
      .where('id', '=', m)
      .execute();
    await inTrx([{ type: 'delivered', message: await messageRow(m) }], sentAt);
    assert.deepEqual((await hours(send.sendId)).find((x) => x.hour === hourOf(sentAt))?.delivered, 1);
    await inTrx([{ type: 'bounced', id: m, after: 'accept', bounce: 'hard', detail: null }], new Date('2031-03-02T00:00:00Z'));
    assert.deepEqual((await hours(send.sendId)).find((x) => x.hour === hourOf(sentAt))?.delivered, 0);
  });

  it('changes nothing when the transaction rolls back', async () => {
    const m = send.messageIds[10];
    const before = await stats(send.sendId);
    await assert.rejects(
      database.db.transaction().execute(async (trx) => {
        await record(trx, { kinds, now }, [{ type: 'opened', id: m }]);
        throw new Error('the cause failed');
      }),
      /the cause failed/,
    );
    assert.deepEqual(diff(before, await stats(send.sendId)), {});
    assert.deepEqual(await opensOf([m]), [0]);
  });
});
