/**
 * The account overview. Messages and their outcomes are seeded straight into the tables the
 * delivery and the engagement events fill (their own tests cover those doors); this checks what the
 * overview reads of them: the window, the outcomes, the days, running sends, and the account.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertNeedsKeys, setup, type TestContext } from '../helpers.js';
import { seedSingleSend } from '../public/seed.js';
import { isoMicros } from '../../src/util/time.js';

const DAY = 86_400_000;

describe('GET /account/overview', () => {
  let t: TestContext;
  let runningUtr: string;
  const today = new Date().toISOString().slice(0, 10);

  before(async () => {
    t = await setup();
    const { db } = t.database;
    const userId = t.a.keys!.user_id;
    const send = await seedSingleSend(db, userId, ['a@example.com', 'b@example.com', 'c@example.com', 'd@example.com']);
    const [opened, alsoOpened, bounced, complained] = send.messageIds;
    await db.updateTable('mail_messages').set({ opens: 2, clicks: 1 }).where('id', '=', opened).execute();
    await db.updateTable('mail_messages').set({ opens: 1 }).where('id', '=', alsoOpened).execute();
    await db.updateTable('mail_messages').set({ state: 'bounced', bounce_type: 'hard' }).where('id', '=', bounced).execute();
    await db.updateTable('mail_messages').set({ complained: 1, unsubscribed: 1 }).where('id', '=', complained).execute();
    await db
      .insertInto('engagement_hours')
      .values([
        { source_table: 'single_sends', source_id: send.sendId, hour: `${today} 00:00:00`, delivered: 3, opens: 2, clicks: 1 },
        { source_table: 'single_sends', source_id: send.sendId, hour: `${today} 01:00:00`, delivered: 0, opens: 1, clicks: 0 },
      ])
      .execute();

    // A send of 40 days ago: outside the window.
    const old = await seedSingleSend(db, userId, ['old@example.com']);
    const longAgo = new Date(Date.now() - 40 * DAY);
    await db
      .updateTable('mail_messages')
      .set({ created_at: isoMicros(longAgo) })
      .where('single_send_id', '=', old.sendId)
      .execute();
    await db
      .insertInto('engagement_hours')
      .values({ source_table: 'single_sends', source_id: old.sendId, hour: `${longAgo.toISOString().slice(0, 10)} 10:00:00`, delivered: 1 })
      .execute();

    // A running send: 1 of 3 messages done.
    const running = await seedSingleSend(db, userId, ['x@example.com', 'y@example.com', 'z@example.com']);
    await db.updateTable('single_sends').set({ status: 2, single_send_name: 'Autumn <sale>' }).where('id', '=', running.sendId).execute();
    await db.updateTable('mail_messages').set({ state: 'queued' }).where('id', 'in', running.messageIds.slice(1)).execute();
    runningUtr = (await db.selectFrom('single_sends').select('utr').where('id', '=', running.sendId).executeTakeFirstOrThrow()).utr;
  });
  after(() => t.close());

  it('counts the messages of the last 30 days and what became of them', async () => {
    const r = await t.a.get('/account/overview');
    assert.equal(r.status, 200);
    const o = r.body.message.overview;
    assert.equal(o.days, 30);
    assert.equal(o.since, `${new Date(Date.parse(today) - 29 * DAY).toISOString().slice(0, 10)}T00:00:00.000000Z`);
    assert.deepEqual(
      {
        single_sends: o.single_sends,
        sent: o.sent,
        delivered: o.delivered,
        unique_opens: o.unique_opens,
        unique_clicks: o.unique_clicks,
        open_rate: o.open_rate,
        click_rate: o.click_rate,
        bounces: o.bounces,
        complaints: o.complaints,
        unsubscribes: o.unsubscribes,
      },
      // 4 + the running send's 3; delivered: the 3 of the first send that did not bounce and the running one's sent message.
      {
        single_sends: 2,
        sent: 7,
        delivered: 4,
        unique_opens: 2,
        unique_clicks: 1,
        open_rate: 0.5,
        click_rate: 0.25,
        bounces: 1,
        complaints: 1,
        unsubscribes: 1,
      },
    );
  });

  it('gives every day of the window, oldest first, with the events of each', async () => {
    const { daily } = (await t.a.get('/account/overview', { days: 7 })).body.message.overview;
    assert.equal(daily.length, 7);
    assert.deepEqual(daily[6], { day: today, delivered: 3, opens: 3, clicks: 1 });
    assert.deepEqual(daily[0], {
      day: new Date(Date.parse(today) - 6 * DAY).toISOString().slice(0, 10),
      delivered: 0,
      opens: 0,
      clicks: 0,
    });
    const year = (await t.a.get('/account/overview', { days: 60 })).body.message.overview;
    assert.equal(year.sent, 8);
    assert.equal(
      year.daily.reduce((n: number, d: { delivered: number }) => n + d.delivered, 0),
      4,
    );
  });

  it('lists the running sends with their progress', async () => {
    const { in_progress } = (await t.a.get('/account/overview')).body.message.overview;
    assert.deepEqual(in_progress, [{ utr: runningUtr, single_send_name: 'Autumn <sale>', messages: 3, done: 1 }]);
  });

  it("shows another account nothing of this one's", async () => {
    const o = (await t.b.get('/account/overview')).body.message.overview;
    assert.equal(o.sent, 0);
    assert.equal(o.open_rate, 0);
    assert.deepEqual(o.in_progress, []);
    assert.ok(o.daily.every((d: { delivered: number; opens: number }) => d.delivered === 0 && d.opens === 0));
  });

  it('refuses a window outside 1 to 365 days, and needs the keys', async () => {
    for (const days of [0, 366, 'week']) {
      const r = await t.a.get('/account/overview', { days });
      assert.equal(r.status, 422, String(days));
      assert.ok(r.body.errors.days, JSON.stringify(r.body));
    }
    await assertNeedsKeys(t.anon, [['GET', '/account/overview']]);
  });
});
