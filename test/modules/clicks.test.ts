import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { simpleParser } from 'mailparser';
import { trackingLinks } from '../../src/delivery/tracking.js';
import { drainQueue } from '../helpers.js';
import { hrefsOf } from './clicks.helpers.js';
import {
  createSend,
  details,
  group,
  messagesOf,
  Rnf,
  sendForm,
  sendRow,
  setupSends,
  typeWith,
  verifiedSender,
  type SendsContext,
} from './single-sends.helpers.js';

const DESIGN = `<html><head><title></title></head><body>
<p>Dear ((first_name)),</p>
<p><a href="https://shop.example.com/spring?who=((first_name))&amp;c=1">Shop</a>
<a href='http://blog.example.com/post'>Blog</a>
<a href="https://shop.example.com/spring?who=((first_name))&amp;c=1">Shop again</a>
<a href="mailto:help@example.com">Mail us</a> <a href="#top">Top</a>
<a href="https://docs.example.com/a b">Docs</a></p>
<p><a href="((unsubscribe_preferences))">Unsubscribe</a> ((sender_address))</p>
</body></html>`;

const URLS = ['https://shop.example.com/spring?who=((first_name))&c=1', 'http://blog.example.com/post', 'https://docs.example.com/a b'];

describe('click tracking of a single send, end to end', () => {
  let t: SendsContext;
  let links: ReturnType<typeof trackingLinks>;
  let utr: string;
  let plainUtr: string;
  const html = new Map<string, string>();
  const text = new Map<string, string>();

  before(async () => {
    t = await setupSends({ sink: true });
    links = trackingLinks(t.config);
    const { type } = await typeWith(t.a, [
      ['tom@example.com', 'Tom & Jerry'],
      ['ann@example.com', 'Ann'],
    ]);
    const base = { sender: await verifiedSender(t, t.a), group: await group(t.a), type };
    utr = await createSend(t.a, sendForm(base, { template_html: DESIGN }));
    plainUtr = await createSend(t.a, sendForm(base, { template_html: DESIGN, single_send_name: 'Untracked', track_clicks: 0 }));
    await drainQueue(t);
    for (const m of t.sink!.messages) {
      const mail = await simpleParser(m.raw);
      const key = `${mail.subject}|${m.raw.includes('/t/click/') ? 'tracked' : 'plain'}|${mail.to && 'value' in mail.to ? mail.to.value[0].address : ''}`;
      html.set(key, mail.html as string);
      text.set(key, mail.text!);
    }
  });
  after(() => t.close());

  const tracked = (who: string) => html.get(`News for ${who === 'tom' ? 'Tom & Jerry' : 'Ann'}|tracked|${who}@example.com`)!;

  test('every http(s) link of the HTML goes through /t/click; mailto, anchors and the unsubscribe link stay', async () => {
    const hrefs = hrefsOf(tracked('ann'));
    const clicks = hrefs.filter((h) => h.startsWith('https://mail.example.test/t/click/'));
    // Three links (one twice) and, last, the hidden trap link (docs/engagement.md).
    assert.equal(clicks.length, 5, hrefs.join('\n'));
    assert.ok(hrefs.includes('mailto:help@example.com'));
    assert.ok(hrefs.includes('#top'));
    assert.ok(
      hrefs.some((h) => /^https:\/\/mail\.example\.test\/u\/[^/]+$/.test(h)),
      'the unsubscribe link is untouched',
    );
    assert.ok(!hrefs.some((h) => h.includes('shop.example.com') || h.includes('blog.example.com')));
    // A URL that appears twice is one link: both anchors carry the same token.
    assert.equal(clicks[0], clicks[2]);
    const row = (await messagesOf(t, utr)).find((m) => m.email_key === 'ann@example.com')!;
    for (const c of clicks) assert.equal(links.readClickToken(c.split('/t/click/')[1])?.messageId, row.id);
    const stored = await t.database.db
      .selectFrom('tracked_links')
      .selectAll()
      .where('source_table', '=', 'single_sends')
      .orderBy('position')
      .execute();
    assert.deepEqual(
      stored.map((l) => l.url),
      URLS,
    );
  });

  test('the text part keeps its links', () => {
    const plain = text.get('News for Ann|tracked|ann@example.com')!;
    assert.match(plain, /https:\/\/shop\.example\.com\/spring\?who=Ann&c=1/);
    assert.match(plain, /http:\/\/blog\.example\.com\/post/);
    assert.ok(!plain.includes('/t/click/'));
  });

  test('track_clicks 0 leaves the links alone, and details show the setting', async () => {
    const plainHtml = html.get('News for Ann|plain|ann@example.com')!;
    const hrefs = hrefsOf(plainHtml);
    assert.ok(hrefs.includes('https://shop.example.com/spring?who=Ann&c=1'), hrefs.join('\n'));
    assert.ok(hrefs.includes('http://blog.example.com/post'));
    assert.equal((await details(t.a, plainUtr)).track_clicks, 0);
    assert.equal((await details(t.a, utr)).track_clicks, 1);
    assert.deepEqual((await t.a.get('/single-send/stats', { utr: plainUtr })).body.message.stats.links, []);
  });

  const clickPath = (who: string, i: number) => new URL(hrefsOf(tracked(who)).filter((h) => h.includes('/t/click/'))[i]).pathname;

  test('a click redirects to the exact URL of the message, placeholders filled for its recipient', async () => {
    const tom = await t.anon.get(clickPath('tom', 0));
    assert.equal(tom.status, 302);
    assert.equal(tom.headers.location, 'https://shop.example.com/spring?who=Tom%20&%20Jerry&c=1');
    assert.equal(tom.headers['referrer-policy'], 'no-referrer');
    assert.equal(tom.text, '');
    const docs = await t.anon.get(clickPath('ann', 3));
    assert.equal(docs.headers.location, 'https://docs.example.com/a%20b');
  });

  test('unique and total clicks per send and per link; a click counts the open that was missing', async () => {
    // A person's clicks on different links come more than 2 s apart (closer, they are a scanner's).
    for (const i of [1, 1, 0]) {
      t.clock.advance(10_000);
      assert.equal((await t.anon.get(clickPath('ann', i))).status, 302);
    }
    // Tom clicked once above (link 0), Ann's docs link once (link 2, position of `Docs`).
    const row = await sendRow(t, utr);
    assert.equal(row.total_clicks, 5);
    assert.equal(row.unique_clicks, 2);
    assert.equal(row.unique_opens, 2, 'each clicker counts as an opener');
    assert.equal(row.total_opens, 2);
    const messages = await messagesOf(t, utr);
    assert.deepEqual(
      messages.map((m) => [m.email_key, m.clicks, m.opens, m.first_clicked_at !== null]),
      [
        ['ann@example.com', 4, 1, true],
        ['tom@example.com', 1, 1, true],
      ],
    );
    const stats = (await t.a.get('/single-send/stats', { utr })).body.message.stats;
    assert.deepEqual(stats.links, [
      { url: URLS[0], unique_clicks: 2, total_clicks: 2 },
      { url: URLS[1], unique_clicks: 1, total_clicks: 2 },
      { url: URLS[2], unique_clicks: 1, total_clicks: 1 },
    ]);
    const d = await details(t.a, utr);
    assert.equal(d.total_clicks, 5);
    assert.equal(d.unique_clicks, 2);
  });

  test('HEAD redirects as GET and counts nothing', async () => {
    const before = await sendRow(t, utr);
    const r = await t.anon.request('HEAD', clickPath('ann', 0));
    assert.equal(r.status, 302);
    assert.equal(r.headers.location, 'https://shop.example.com/spring?who=Ann&c=1');
    assert.equal((await sendRow(t, utr)).total_clicks, before.total_clicks);
  });

  test('a forged or altered token: 404 and a small page, never a redirect', async () => {
    const real = clickPath('ann', 0).split('/t/click/')[1];
    const [m, l, mac] = real.split('.');
    const variants = [
      `${m}.${(parseInt(l, 36) + 1).toString(36)}.${mac}`,
      `${(parseInt(m, 36) + 1).toString(36)}.${l}.${mac}`,
      `${m}.${l}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`,
      `0${m}.${l}.${mac}`,
      `${m}.${l}.${mac}x`,
      links.openToken(1),
    ];
    for (const token of variants) {
      const r = await t.anon.get(`/t/click/${token}`);
      assert.equal(r.status, 404, token);
      assert.equal(r.headers.location, undefined);
      assert.match(String(r.headers['content-type']), /^text\/html/);
      assert.match(r.text, /This link is not valid/);
    }
    // Genuine signature, but the link belongs to another send: nothing counted, no redirect.
    const other = (await messagesOf(t, plainUtr))[0];
    const r = await t.anon.get(`/t/click/${links.clickToken(other.id, parseInt(l, 36))}`);
    assert.equal(r.status, 404);
  });

  test('a fuzz of malformed tokens never answers 5xx nor redirects', async () => {
    const chars = 'abz09.-_~%/AZ+=\u00e9\u0000 ';
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const real = clickPath('tom', 1).split('/t/click/')[1];
    for (let i = 0; i < 300; i++) {
      let token = i % 2 === 0 ? real : '';
      const edits = 1 + rnd(4);
      for (let e = 0; e < edits; e++) {
        const at = rnd(token.length + 1);
        token = token.slice(0, at) + chars[rnd(chars.length)] + token.slice(at + (rnd(2) ? 1 : 0));
      }
      if (token === real) continue;
      const r = await t.anon.get(`/t/click/${encodeURIComponent(token)}`);
      assert.ok(r.status < 500, `${token}: ${r.status}`);
      assert.notEqual(r.status, 302, token);
    }
  });

  test('stats: the whole shape, with the timeline per UTC hour', async () => {
    t.clock.advance(2 * 3600_000);
    await t.anon.get(clickPath('tom', 1));
    const r = await t.a.get('/single-send/stats', { utr });
    assert.equal(r.status, 200);
    const stats = r.body.message.stats;
    assert.deepEqual(Object.keys(stats), [
      'triggered',
      'delivered',
      'hard_bounces',
      'soft_bounces',
      'unique_opens',
      'total_opens',
      'unique_clicks',
      'total_clicks',
      'unsubscribes',
      'spam_reports',
      'unique_human_opens',
      'machine_opens',
      'bot_clicks',
      'links',
      'timeline',
      'variants',
    ]);
    assert.equal(stats.triggered, 2);
    assert.equal(stats.delivered, 2);
    assert.equal(stats.total_clicks, 6);
    assert.deepEqual(stats.timeline, [
      { hour: '2030-01-15 10:00:00', delivered: 2, opens: 2, clicks: 5 },
      { hour: '2030-01-15 12:00:00', delivered: 0, opens: 0, clicks: 1 },
    ]);
    const d = await details(t.a, utr);
    assert.equal(stats.delivered, d.delivered);
    assert.equal(stats.unique_opens, d.unique_opens);
    assert.equal(stats.total_opens, d.total_opens);
  });

  test("stats: Record not found for another account's send and an unknown utr", async () => {
    assert.deepEqual((await t.b.get('/single-send/stats', { utr })).body, Rnf);
    assert.equal((await t.b.get('/single-send/stats', { utr })).status, 404);
    assert.deepEqual((await t.a.get('/single-send/stats', { utr: '00000000-0000-4000-8000-000000000000' })).body, Rnf);
  });

  test('track_clicks is validated (create and update) and stored', async () => {
    const { type } = await typeWith(t.a, [['zed@example.com', 'Zed']]);
    const base = { sender: await verifiedSender(t, t.a), group: await group(t.a, 'Other'), type };
    for (const bad of [2, 'yes']) {
      const r = await t.a.post('/single/send/create', sendForm(base, { track_clicks: bad }));
      assert.equal(r.status, 422);
      assert.ok(r.body.errors.track_clicks.includes('The selected track clicks is invalid.') || bad === 'yes', JSON.stringify(r.body));
    }
    const u = await createSend(t.a, sendForm(base));
    assert.equal((await details(t.a, u)).track_clicks, 1);
    const up = await t.a.post('/single/send/update', { ...sendForm(base, { track_clicks: '0' }), utr: u });
    assert.equal(up.status, 200, up.text);
    assert.equal((await details(t.a, u)).track_clicks, 0);
    const bad = await t.a.post('/single/send/update', { ...sendForm(base, { track_clicks: 3 }), utr: u });
    assert.deepEqual(bad.body.errors.track_clicks, ['The selected track clicks is invalid.']);
  });
});
