import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { simpleParser } from 'mailparser';
import { drainQueue } from '../helpers.js';
import { act, addEmail, automationWith } from './automations-delivery.helpers.js';
import { hrefsOf } from './clicks.helpers.js';
import { group, Rnf, setupSends, typeWith, verifiedSender, type SendsContext } from './single-sends.helpers.js';

const page = (links: string[]) =>
  `<html><body><p>Hello ((first_name))</p>${links.map((l, i) => `<a href="${l}">Link ${i}</a>`).join(' ')}</body></html>`;

describe('click tracking of automation emails, and the automation statistics', () => {
  let t: SendsContext;
  let utr: string;
  let sender: number;
  const clickPaths = new Map<string, string[]>();

  before(async () => {
    t = await setupSends({ sink: true });
    sender = await verifiedSender(t, t.a);
    const grp = await group(t.a);
    const { type } = await typeWith(t.a, [
      ['ada@example.com', 'Ada'],
      ['bob@example.com', 'Bob'],
    ]);
    utr = await automationWith(t.a, {
      type: 'custom',
      target: `contacts_${type}`,
      group: grp,
      sender,
      emails: [
        { subject: 'First', html: page(['https://a.example.com/', 'https://b.example.com/?n=((first_name))']) },
        { subject: 'Second', html: page(['https://c.example.com/', 'https://a.example.com/']) },
      ],
    });
    // An email that tracks nothing.
    const r = await t.a.post('/automations/schedule/create', {
      utr,
      sender_id: sender,
      subject: 'Third',
      waiting_period: 1,
      waiting_type: 'instantly',
      template_id: 1,
      preview_img: 'blank.png',
      template_html: page(['https://d.example.com/']),
      track_clicks: 0,
    });
    assert.equal(r.status, 200, r.text);
    await drainQueue(t);
    await act(t.a, '/automations/set-live', utr);
    for (let i = 0; i < 4; i++) {
      await drainQueue(t);
      t.clock.advance(1000);
    }
    for (const m of t.sink!.messages) {
      const mail = await simpleParser(m.raw);
      const to = mail.to && 'value' in mail.to ? mail.to.value[0].address : '';
      clickPaths.set(
        `${to}|${mail.subject}`,
        // The last click link of a tracked mail is its hidden trap link (docs/engagement.md).
        hrefsOf(mail.html as string).filter((h) => h.includes('/t/click/') || h.includes('d.example')),
      );
    }
  });
  after(() => t.close());

  test('each email is rewritten, one with track_clicks 0 is not; schedules show the setting', async () => {
    assert.equal(clickPaths.get('ada@example.com|First')!.length, 3, 'two links and the trap link');
    assert.equal(clickPaths.get('ada@example.com|Second')!.length, 3);
    assert.deepEqual(clickPaths.get('ada@example.com|Third'), ['https://d.example.com/']);
    const list = (await t.a.get('/automations/schedule', { utr })).body.message.automation_schedules;
    assert.deepEqual(
      list.map((s: { track_clicks: number }) => s.track_clicks),
      [1, 1, 0],
    );
  });

  test('clicks redirect with placeholders filled, count on the automation and its links; stats merge a URL across emails', async () => {
    const go = async (key: string, i: number) => {
      const r = await t.anon.get(new URL(clickPaths.get(key)![i]).pathname);
      assert.equal(r.status, 302);
      return r.headers.location;
    };
    assert.equal(await go('bob@example.com|First', 1), 'https://b.example.com/?n=Bob');
    // A person's clicks on two links of one mail come more than 2 s apart (closer, they are a scanner's).
    t.clock.advance(10_000);
    assert.equal(await go('bob@example.com|First', 0), 'https://a.example.com/');
    assert.equal(await go('bob@example.com|Second', 1), 'https://a.example.com/');
    t.clock.advance(3600_000);
    assert.equal(await go('ada@example.com|Second', 0), 'https://c.example.com/');
    assert.equal(await go('ada@example.com|Second', 0), 'https://c.example.com/');
    const r = await t.a.get('/automations/stats', { utr });
    assert.equal(r.status, 200, r.text);
    const stats = r.body.message.stats;
    const row = await t.database.db.selectFrom('automations').selectAll().where('utr', '=', utr).executeTakeFirstOrThrow();
    assert.equal(stats.triggered, 6);
    assert.equal(stats.delivered, 6);
    assert.equal(stats.total_clicks, 5);
    assert.equal(stats.unique_clicks, 3, 'Bob First, Bob Second, Ada Second');
    assert.equal(row.total_clicks, 5);
    assert.equal(row.total_unique_clicks, 3);
    assert.equal(stats.unique_opens, 3);
    assert.deepEqual(stats.links, [
      { url: 'https://a.example.com/', unique_clicks: 2, total_clicks: 2 },
      { url: 'https://b.example.com/?n=((first_name))', unique_clicks: 1, total_clicks: 1 },
      { url: 'https://c.example.com/', unique_clicks: 1, total_clicks: 2 },
    ]);
    assert.equal(stats.timeline.length, 2);
    assert.deepEqual(stats.timeline[1], { hour: stats.timeline[1].hour, delivered: 0, opens: 1, clicks: 2 });
    assert.equal(stats.timeline[0].delivered, 6);
    assert.equal(stats.timeline[0].clicks, 3);
    assert.match(stats.timeline[0].hour, /^\d{4}-\d{2}-\d{2} \d{2}:00:00$/);
  });

  test("stats: Record not found for another account's automation", async () => {
    const r = await t.b.get('/automations/stats', { utr });
    assert.equal(r.status, 404);
    assert.deepEqual(r.body, Rnf);
  });

  test('track_clicks on schedule create is validated', async () => {
    const r = await t.a.post('/automations/schedule/create', {
      utr,
      sender_id: sender,
      subject: 'Bad',
      waiting_period: 1,
      waiting_type: 'instantly',
      template_id: 1,
      preview_img: 'blank.png',
      template_html: page([]),
      track_clicks: 5,
    });
    assert.equal(r.status, 422);
    assert.deepEqual(r.body.errors.track_clicks, ['The selected track clicks is invalid.']);
  });

  test('addEmail helper still works without track_clicks (default 1)', async () => {
    await addEmail(t.a, utr, sender, { subject: 'Fourth' });
    const list = (await t.a.get('/automations/schedule', { utr })).body.message.automation_schedules;
    assert.equal(list.at(-1).track_clicks, 1);
  });
});
