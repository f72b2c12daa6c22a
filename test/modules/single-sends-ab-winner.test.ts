import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { isoMicros } from '../../src/util/time.js';
import { suppressAddress } from '../../src/suppression/suppression.writes.js';
import { drainQueue } from '../helpers.js';
import { hrefsOf } from './clicks.helpers.js';
import { addEndpoint, eventsSince, lastEventId } from '../events/events.helpers.js';
import {
  abForm,
  APPLE_PROXY,
  audience,
  BROWSER,
  click,
  exactlyOnce,
  LINKED,
  open,
  shareOf,
  variantsOf,
} from './single-sends-ab.helpers.js';
import { createSend, group, sendRow, setupSends, verifiedSender, type SendsContext } from './single-sends.helpers.js';

const HOUR = 3600_000;

describe('single sends: an A/B test splits its share, waits, and sends the winner to the rest', () => {
  let t: SendsContext;
  let sender: number;
  let groupId: number;

  before(async () => {
    t = await setupSends({ sink: true });
    sender = await verifiedSender(t, t.a);
    groupId = await group(t.a);
    await addEndpoint(t.database, t.a.keys!.user_id, { events: ['single_send.ab_winner'] });
  });
  after(() => t.close());

  /** A test to a new audience of `n`, started and its share sent: its utr, addresses and stored row. */
  async function started(prefix: string, n: number, subjects: string[], extra: Record<string, unknown> = {}) {
    const { type, emails } = await audience(t, prefix, n);
    const utr = await createSend(t.a, abForm({ sender, group: groupId, type }, subjects, { template_html: LINKED, ...extra }));
    await drainQueue(t);
    return { utr, type, emails, row: await sendRow(t, utr) };
  }

  /** The figures of each variant in the statistics. */
  const variantStats = async (utr: string) => (await t.a.get('/single-send/stats', { utr })).body.message.stats.variants;

  test('the share is split evenly at random, recorded per message; the send waits in status 2 once the share went out', async () => {
    const { utr, type, emails, row } = await started('split', 62, ['Subject B', 'Subject C'], { ab_test_percent: 30 });
    const variants = await variantsOf(t, utr);
    // round(62 × 30%) = 19: sizes 7, 6, 6.
    assert.equal(variants.size, 19);
    const sizes = [0, 1, 2].map((i) => [...variants.values()].filter((v) => v === i).length);
    assert.deepEqual([...sizes].sort(), [6, 6, 7]);
    assert.deepEqual([row.status, row.triggered, row.ab_winner], [2, 19, null]);
    assert.equal(row.ab_wait_ends_at, isoMicros(new Date(t.clock.now().getTime() + HOUR)));
    const subjects = exactlyOnce(t, [...variants.keys()]);
    for (const [email, v] of variants) assert.equal(subjects.get(email), ['Subject A', 'Subject B', 'Subject C'][v!]);
    assert.equal(emails.filter((e) => !variants.has(e) && t.sink!.to(e).length > 0).length, 0, 'nobody else got mail yet');

    // Still waiting a minute before its end; then the winner goes to the 43 others, each once.
    t.clock.advance(HOUR - 60_000);
    await drainQueue(t);
    assert.equal((await sendRow(t, utr)).ab_winner, null);
    t.clock.advance(60_000);
    await drainQueue(t);
    const done = await sendRow(t, utr);
    assert.deepEqual([done.status, done.ab_winner, done.triggered, done.delivered], [3, 0, 62, 62]);
    const all = exactlyOnce(t, emails);
    for (const e of emails) if (!variants.has(e)) assert.equal(all.get(e), 'Subject A');

    // Another test of the same audience draws another share: the order is random.
    const again = await createSend(t.a, abForm({ sender, group: groupId, type }, ['Subject B', 'Subject C'], { ab_test_percent: 30 }));
    await drainQueue(t);
    assert.notDeepEqual([...(await variantsOf(t, again)).keys()].sort(), [...variants.keys()].sort());
  });

  test("the winner on opens counts people's opens only: a variant opened by machines loses to one opened by a person", async () => {
    const since = await lastEventId(t.database);
    const { utr, emails } = await started('opens', 20, ['Subject B']);
    for (const m of await shareOf(t, utr, 0)) await open(t, m.id, APPLE_PROXY);
    for (const m of await shareOf(t, utr, 0)) await open(t, m.id, '');
    await open(t, (await shareOf(t, utr, 1))[0].id, BROWSER);
    assert.deepEqual(
      (await variantStats(utr)).map((v: Record<string, unknown>) => [v.index, v.triggered, v.delivered, v.unique_human_opens, v.winner]),
      [
        [0, 5, 5, 0, false],
        [1, 5, 5, 1, false],
      ],
    );
    t.clock.advance(HOUR);
    await drainQueue(t);
    assert.equal((await sendRow(t, utr)).ab_winner, 1);
    const subjects = exactlyOnce(t, emails);
    const share = await variantsOf(t, utr);
    for (const e of emails) if (share.get(e) === null) assert.equal(subjects.get(e), 'Subject B');
    const [event] = (await eventsSince(t.database, since, 'single_send.ab_winner')).filter((e) => e.body.data.utr === utr);
    assert.deepEqual(event.body.data, { utr, variant: 1, metric: 'opens', rates: [0, 0.2], manual: false });
    const stats = await variantStats(utr);
    assert.deepEqual(
      stats.map((v: Record<string, unknown>) => [v.index, v.subject, v.winner]),
      [
        [0, 'Subject A', false],
        [1, 'Subject B', true],
      ],
    );
  });

  test("the winner on clicks counts people's clicks only: scanners' clicks do not decide it", async () => {
    const { utr } = await started('clicks', 20, ['Subject B'], { ab_winner_metric: 'clicks' });
    for (const m of await shareOf(t, utr, 0)) {
      await click(t, m.id, undefined);
      await open(t, m.id, BROWSER);
    }
    await click(t, (await shareOf(t, utr, 1))[0].id, BROWSER);
    t.clock.advance(HOUR);
    await drainQueue(t);
    const row = await sendRow(t, utr);
    assert.deepEqual([row.ab_winner, row.status], [1, 3]);
    assert.deepEqual(
      (await variantStats(utr)).map((v: Record<string, unknown>) => [v.unique_human_opens, v.unique_clicks, v.winner]),
      [
        [5, 0, false],
        [1, 1, true],
      ],
    );
  });

  test('a tie goes to the lower index', async () => {
    const { utr } = await started('tie', 60, ['Subject B', 'Subject C'], { ab_test_percent: 30 });
    const shares = await Promise.all([0, 1, 2].map((i) => shareOf(t, utr, i)));
    assert.deepEqual(
      shares.map((s) => s.length),
      [6, 6, 6],
    );
    await open(t, shares[0][0].id, BROWSER);
    for (const i of [1, 2]) for (const m of shares[i].slice(0, 2)) await open(t, m.id, BROWSER);
    t.clock.advance(HOUR);
    await drainQueue(t);
    assert.equal((await sendRow(t, utr)).ab_winner, 1);
  });

  test('picked by hand while waiting: the winner goes out at once; late events count in the stats but change nothing', async () => {
    const since = await lastEventId(t.database);
    const { utr, emails } = await started('hand', 10, ['Subject B']);
    const late = await shareOf(t, utr, 1);
    const r = await t.a.post('/single/send/ab-winner', { utr, variant: 0 });
    assert.deepEqual(r.body.message, { utr, ab_winner: 0, queued: 5 });
    await drainQueue(t);
    assert.equal((await sendRow(t, utr)).status, 3);
    exactlyOnce(t, emails);
    const [event] = (await eventsSince(t.database, since, 'single_send.ab_winner')).filter((e) => e.body.data.utr === utr);
    assert.deepEqual(event.body.data, { utr, variant: 0, metric: 'opens', rates: [0, 0], manual: true });
    // Opens of variant 1 after the choice: counted, and the winner stays.
    for (const m of late) await open(t, m.id, BROWSER);
    t.clock.advance(HOUR);
    await drainQueue(t);
    const stats = await variantStats(utr);
    assert.deepEqual(
      stats.map((v: Record<string, unknown>) => [v.unique_human_opens, v.winner]),
      [
        [0, true],
        [late.length, false],
      ],
    );
    assert.equal((await sendRow(t, utr)).ab_winner, 0);
  });

  test("unsubscribes, suppressions, exclusions and deletions during the wait apply to the winner's send; new contacts get it", async () => {
    const { type: blocked } = await audience(t, 'blocked', 0);
    const { utr, type, emails } = await started('late', 20, ['Subject B'], {
      ab_test_percent: 20,
      exclude_specific_recipient_id: [`contacts_${blocked}`],
    });
    const share = await variantsOf(t, utr);
    const rest = emails.filter((e) => !share.has(e));
    const [globalOut, groupOut, suppressed, deleted, excluded] = rest;
    assert.equal((await t.a.post('/global-unsubscribes/save', { email_address: globalOut })).status, 200);
    assert.equal(
      (await t.a.post('/unsubscribes-groups/manually-add', { unsubscribe_groups_id: groupId, email_address: groupOut })).status,
      200,
    );
    await suppressAddress(
      t.database.db,
      { user_id: t.a.keys!.user_id, email: suppressed, email_key: suppressed },
      'hard_bounce',
      '550 unknown',
      t.clock.now(),
    );
    const contacts = await t.database.db.selectFrom('contacts').select(['id', 'email']).where('contact_type_id', '=', type).execute();
    const victim = contacts.find((c) => c.email === deleted)!;
    assert.equal((await t.a.delete('/contacts/delete', { contact_id: victim.id })).status, 200);
    // The send excludes a contact type that gains an address during the wait.
    assert.equal(
      (await t.a.post('/contacts/add', { contact_type_id: blocked, email: excluded, first_name: 'X', country: 101 })).status,
      200,
    );
    assert.equal(
      (await t.a.post('/contacts/add', { contact_type_id: type, email: 'newcomer@example.com', first_name: 'N', country: 101 })).status,
      200,
    );

    t.clock.advance(HOUR);
    await drainQueue(t);
    const done = await sendRow(t, utr);
    assert.deepEqual([done.status, done.triggered], [3, 4 + rest.length - 5 + 1]);
    for (const e of [globalOut, groupOut, suppressed, deleted, excluded]) assert.equal(t.sink!.to(e).length, 0, e);
    exactlyOnce(t, [...share.keys(), ...rest.slice(5), 'newcomer@example.com']);
  });

  test("a variant with a design of its own: its mail, its tracked links (placeholders filled) counted on the send; then the rest's", async () => {
    const own = '<html><body><p>B for ((first_name))</p><p><a href="https://b.example.com/((sender_name))">B link</a></p></body></html>';
    const { utr, emails } = await started('design', 10, [], {
      ab_winner_metric: 'clicks',
      variants: [{ subject: 'Subject B', template_html: own }],
    });
    const [first, second] = await shareOf(t, utr, 1);
    const mail = t.sink!.to(first.email)[0];
    assert.equal(mail.subject, 'Subject B');
    assert.match(mail.html!, /B for P\d/);
    assert.ok(!mail.html!.includes('Hello'), "not the send's design");
    const href = hrefsOf(mail.html!).find((h) => h.includes('/t/click/'))!;
    const r = await t.app.inject({ method: 'GET', url: new URL(href).pathname, headers: { 'user-agent': BROWSER } });
    assert.deepEqual([r.statusCode, r.headers.location], [302, 'https://b.example.com/Acme%20News']);
    assert.match(t.sink!.to(second.email)[0].html!, /B for P\d/);
    const stats = (await t.a.get('/single-send/stats', { utr })).body.message.stats;
    assert.deepEqual(stats.links.map((l: { url: string; unique_clicks: number }) => [l.url, l.unique_clicks]).sort(), [
      ['https://b.example.com/((sender_name))', 1],
      ['https://shop.example.com/spring', 0],
    ]);
    t.clock.advance(HOUR);
    await drainQueue(t);
    const share = await variantsOf(t, utr);
    const subjects = exactlyOnce(t, emails);
    for (const e of emails.filter((x) => share.get(x) === null)) {
      assert.equal(subjects.get(e), 'Subject B');
      assert.match(t.sink!.to(e)[0].html!, /B for P\d/);
    }
  });

  test('a test deleted while it waits is cancelled and completes without a winner', async () => {
    const { utr, emails } = await started('gone', 10, ['Subject B']);
    assert.equal((await t.a.delete('/single/send/delete', { utr })).status, 200);
    t.clock.advance(HOUR);
    await drainQueue(t);
    const row = await sendRow(t, utr);
    assert.deepEqual([row.status, row.ab_winner, row.triggered], [3, null, 5]);
    assert.equal(emails.filter((e) => t.sink!.to(e).length > 0).length, 5);
  });
});
