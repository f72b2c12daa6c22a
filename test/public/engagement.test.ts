import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Parser } from 'htmlparser2';
import { simpleParser } from 'mailparser';
import { trackingLinks } from '../../src/delivery/tracking.js';
import { drainQueue } from '../helpers.js';
import { hrefsOf } from '../modules/clicks.helpers.js';
import { createSend, group, sendForm, setupSends, typeWith, verifiedSender, type SendsContext } from '../modules/single-sends.helpers.js';

const DESIGN = `<html><head><title></title></head><body>
<p><a href="https://shop.example.com/spring">Shop</a> <a href="https://blog.example.com/post">Blog</a>
<a href="https://docs.example.com/guide">Docs</a></p>
<p><a href="((unsubscribe_preferences))">Unsubscribe</a> ((sender_address))</p>
</body></html>`;

const BROWSER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';
const GMAIL = 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)';
const PEOPLE = ['r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7', 'r8'];

/** The `<a>` elements of an HTML document: attributes and the text between their tags. */
function anchorsOf(html: string): Array<{ attrs: Record<string, string>; text: string }> {
  const out: Array<{ attrs: Record<string, string>; text: string }> = [];
  let current: { attrs: Record<string, string>; text: string } | null = null;
  new Parser({
    onopentag(name, attrs) {
      if (name === 'a') out.push((current = { attrs, text: '' }));
    },
    ontext(text) {
      if (current) current.text += text;
    },
    onclosetag(name) {
      if (name === 'a') current = null;
    },
  }).end(html);
  return out;
}

describe('machine opens and scanner clicks, through the pixel and the click redirect', () => {
  let t: SendsContext;
  let dir: string;
  let utr: string;
  let links: ReturnType<typeof trackingLinks>;
  const ids = new Map<string, number>();
  const clicks = new Map<string, string[]>();
  const html = new Map<string, string>();
  const text = new Map<string, string>();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'machine-ranges-'));
    const file = join(dir, 'egress.csv');
    // Apple's published egress list has this shape (CIDR first); a plain address and a comment too.
    writeFileSync(file, '# sample\n17.58.0.0/16,US,US-CA,Cupertino,\n2620:149:a00::/48,US,US-CA,Cupertino,\n\n198.51.100.7\n');
    t = await setupSends({ sink: true, env: { MACHINE_IP_RANGES_FILE: file } });
    links = trackingLinks(t.config);
    const { type } = await typeWith(
      t.a,
      PEOPLE.map((p) => [`${p}@example.com`, p]),
    );
    const base = { sender: await verifiedSender(t, t.a), group: await group(t.a), type };
    utr = await createSend(t.a, sendForm(base, { template_html: DESIGN }));
    await drainQueue(t);
    for (const m of t.sink!.messages) {
      const mail = await simpleParser(m.raw);
      const to = mail.to && 'value' in mail.to ? mail.to.value[0].address!.split('@')[0] : '';
      html.set(to, mail.html as string);
      text.set(to, mail.text!);
      clicks.set(
        to,
        hrefsOf(mail.html as string)
          .filter((h) => h.includes('/t/click/'))
          .map((h) => new URL(h).pathname),
      );
    }
    const rows = await t.database.db
      .selectFrom('mail_messages')
      .select(['id', 'email_key'])
      .where('single_send_id', 'is not', null)
      .execute();
    for (const r of rows) ids.set(r.email_key.split('@')[0], r.id);
  });
  after(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const stats = async () => (await t.a.get('/single-send/stats', { utr })).body.message.stats;
  const message = (who: string) =>
    t.database.db
      .selectFrom('mail_messages')
      .select([
        'opens',
        'clicks',
        'machine_opens',
        'bot_clicks',
        'first_opened_at',
        'first_clicked_at',
        'last_human_opened_at',
        'last_human_clicked_at',
      ])
      .where('id', '=', ids.get(who)!)
      .executeTakeFirstOrThrow();
  const headers = (ua: string | undefined) => ({ 'user-agent': ua });
  const open = async (who: string, ua: string | undefined, address = '203.0.113.9') => {
    const r = await t.app.inject({
      method: 'GET',
      url: `/t/open/${links.openToken(ids.get(who)!)}.gif`,
      headers: headers(ua),
      remoteAddress: address,
    });
    assert.equal(r.statusCode, 200);
  };
  /** Clicks link `i` of `who`'s mail (`trap`: the trap link); answers the redirect's Location. */
  /** `ua` null: no User-Agent at all. */
  const click = async (who: string, i: number | 'trap', ua: string | null = BROWSER, method: 'GET' | 'HEAD' = 'GET') => {
    const paths = clicks.get(who)!;
    const r = await t.app.inject({ method, url: i === 'trap' ? paths.at(-1)! : paths[i], headers: headers(ua ?? undefined) });
    assert.equal(r.statusCode, 302);
    return r.headers.location;
  };
  const iso = () => t.clock.now().toISOString().replace('Z', '000Z');

  test('every mail with tracked links carries one hidden trap link, never in the text nor in the links of the stats', async () => {
    const anchors = anchorsOf(html.get('r0')!).filter((a) => a.attrs.href?.includes('/t/click/'));
    assert.equal(anchors.length, 4, 'three links and the trap link');
    const trap = anchors.at(-1)!;
    assert.equal(trap.attrs.href, links.trapUrl(ids.get('r0')!));
    assert.equal(trap.text, '', 'nothing between its tags');
    assert.ok('hidden' in trap.attrs);
    assert.equal(trap.attrs['aria-hidden'], 'true');
    assert.equal(trap.attrs.tabindex, '-1');
    assert.match(trap.attrs.style, /display:none/);
    for (const a of anchors.slice(0, 3)) assert.ok(!('hidden' in a.attrs) && a.text.trim() !== '');
    assert.ok(!text.get('r0')!.includes('/t/click/'));
    assert.deepEqual(
      (await stats()).links.map((l: { url: string }) => l.url),
      ['https://shop.example.com/spring', 'https://blog.example.com/post', 'https://docs.example.com/guide'],
    );
  });

  test("Apple's proxy agent, an empty agent and no agent are machine opens; Gmail's image proxy and a browser are people's", async () => {
    const s0 = await stats();
    await open('r0', 'Mozilla/5.0');
    await open('r0', '');
    await open('r0', undefined);
    let m = await message('r0');
    assert.deepEqual([m.opens, m.machine_opens, m.last_human_opened_at], [3, 3, null]);
    let s = await stats();
    assert.deepEqual(
      [
        s.total_opens - s0.total_opens,
        s.unique_opens - s0.unique_opens,
        s.machine_opens - s0.machine_opens,
        s.unique_human_opens - s0.unique_human_opens,
      ],
      [3, 1, 3, 0],
      'machine opens count in the opens as before, and as no person',
    );
    t.clock.advance(60_000);
    await open('r0', GMAIL);
    m = await message('r0');
    assert.deepEqual([m.opens, m.machine_opens, m.last_human_opened_at], [4, 3, iso()]);
    t.clock.advance(60_000);
    await open('r0', BROWSER);
    m = await message('r0');
    assert.deepEqual([m.opens, m.machine_opens, m.last_human_opened_at], [5, 3, iso()]);
    s = await stats();
    assert.deepEqual(
      [s.total_opens - s0.total_opens, s.unique_opens - s0.unique_opens, s.unique_human_opens - s0.unique_human_opens],
      [5, 1, 1],
    );
  });

  test('opens from the addresses of MACHINE_IP_RANGES_FILE are machine opens (IPv4, IPv6, IPv4-mapped); Gmail through them is a person', async () => {
    for (const address of ['17.58.1.2', '2620:149:a00::1', '::ffff:17.58.9.9', '198.51.100.7']) await open('r1', BROWSER, address);
    let m = await message('r1');
    assert.deepEqual([m.opens, m.machine_opens, m.last_human_opened_at], [4, 4, null]);
    await open('r1', BROWSER, '198.51.100.8');
    await open('r1', GMAIL, '17.58.1.2');
    m = await message('r1');
    assert.deepEqual([m.opens, m.machine_opens, m.last_human_opened_at], [6, 4, iso()]);
  });

  test('HEAD requests count nothing and still answer', async () => {
    const before = await message('r2');
    const pixel = await t.app.inject({ method: 'HEAD', url: `/t/open/${links.openToken(ids.get('r2')!)}.gif`, headers: headers(BROWSER) });
    assert.equal(pixel.statusCode, 200);
    assert.equal(await click('r2', 0, BROWSER, 'HEAD'), 'https://shop.example.com/spring');
    assert.equal(await click('r2', 'trap', BROWSER, 'HEAD'), 'https://mail.example.test');
    assert.deepEqual(await message('r2'), before);
    assert.equal(
      (await t.database.db.selectFrom('message_clicks').select('id').where('message_id', '=', ids.get('r2')!).execute()).length,
      0,
    );
  });

  test("a click with no agent, an empty agent or a scanner's agent counts in bot_clicks only", async () => {
    const s0 = await stats();
    t.clock.advance(60_000);
    assert.equal(await click('r2', 0, null), 'https://shop.example.com/spring');
    t.clock.advance(60_000);
    await click('r2', 0, '');
    t.clock.advance(60_000);
    await click('r2', 0, 'Mozilla/5.0 (compatible; BingPreview/1.0b)');
    const m = await message('r2');
    assert.deepEqual(
      [m.clicks, m.bot_clicks, m.opens, m.first_clicked_at, m.last_human_clicked_at, m.last_human_opened_at],
      [0, 3, 0, null, null, null],
    );
    const s = await stats();
    assert.deepEqual(
      [s.total_clicks, s.unique_clicks, s.unique_opens, s.total_opens, s.bot_clicks - s0.bot_clicks, s.links[0]],
      [s0.total_clicks, s0.unique_clicks, s0.unique_opens, s0.total_opens, 3, s0.links[0]],
    );
  });

  test('two different links of one mail within 2 s are both a scanner’s; ten seconds apart, both a person’s', async () => {
    const s0 = await stats();
    t.clock.advance(3600_000);
    await click('r3', 0);
    const person = await message('r3');
    assert.deepEqual([person.clicks, person.bot_clicks, person.last_human_clicked_at], [1, 0, iso()]);
    t.clock.advance(1000);
    await click('r3', 1);
    let m = await message('r3');
    assert.deepEqual(
      [m.clicks, m.bot_clicks, m.opens, m.first_clicked_at, m.first_opened_at, m.last_human_clicked_at, m.last_human_opened_at],
      [0, 2, 0, null, null, null, null],
      'the first click, counted as a person’s, is moved to the scanners with the open it had counted',
    );
    let s = await stats();
    assert.deepEqual(
      [s.total_clicks, s.unique_clicks, s.total_opens, s.unique_opens, s.unique_human_opens, s.bot_clicks - s0.bot_clicks],
      [s0.total_clicks, s0.unique_clicks, s0.total_opens, s0.unique_opens, s0.unique_human_opens, 2],
    );
    assert.deepEqual(s.links, s0.links, 'link counters back');
    assert.deepEqual(s.timeline, s0.timeline, 'the hour of the moved click back');

    t.clock.advance(60_000);
    await click('r4', 0);
    t.clock.advance(10_000);
    await click('r4', 1);
    m = await message('r4');
    assert.deepEqual([m.clicks, m.bot_clicks, m.opens, m.last_human_clicked_at], [2, 0, 1, iso()]);
    s = await stats();
    assert.deepEqual(
      [s.total_clicks - s0.total_clicks, s.unique_clicks - s0.unique_clicks, s.unique_human_opens - s0.unique_human_opens],
      [2, 1, 1],
    );
    assert.deepEqual(
      s.links.map((l: { total_clicks: number; unique_clicks: number }, i: number) => [
        l.total_clicks - s0.links[i].total_clicks,
        l.unique_clicks - s0.links[i].unique_clicks,
      ]),
      [
        [1, 1],
        [1, 1],
        [0, 0],
      ],
    );
  });

  test('the trap link redirects to the public address; it and every click of the mail within 60 s of it are a scanner’s', async () => {
    const s0 = await stats();
    t.clock.advance(3600_000);
    await click('r5', 2);
    const clickedAt = iso();
    t.clock.advance(30_000);
    assert.equal(await click('r5', 'trap'), 'https://mail.example.test');
    let m = await message('r5');
    assert.deepEqual([m.clicks, m.bot_clicks, m.first_clicked_at, m.last_human_clicked_at, m.opens], [0, 2, null, null, 0]);
    assert.notEqual(clickedAt, null);
    t.clock.advance(50_000);
    await click('r5', 1);
    m = await message('r5');
    assert.deepEqual([m.clicks, m.bot_clicks], [0, 3], '50 s after the trap: a scanner');
    t.clock.advance(20_000);
    await click('r5', 1);
    m = await message('r5');
    assert.deepEqual([m.clicks, m.bot_clicks, m.last_human_clicked_at], [1, 3, iso()], '70 s after the trap: a person');
    const s = await stats();
    assert.deepEqual([s.total_clicks - s0.total_clicks, s.bot_clicks - s0.bot_clicks], [1, 3]);
    assert.deepEqual(
      s.links.map((l: { total_clicks: number }, i: number) => l.total_clicks - s0.links[i].total_clicks),
      [0, 1, 0],
    );
  });

  test('a person’s click before a scanner’s burst stays; the burst is taken back to it (last_human_clicked_at, first click, timeline)', async () => {
    t.clock.advance(3600_000);
    await click('r6', 2);
    const first = iso();
    const s0 = await stats();
    t.clock.advance(3600_000);
    await click('r6', 0);
    let m = await message('r6');
    assert.deepEqual([m.clicks, m.last_human_clicked_at], [2, iso()]);
    const mid = await stats();
    assert.equal(mid.timeline.at(-1).clicks, 1, 'counted in its hour as a person’s click first');
    t.clock.advance(500);
    await click('r6', 1);
    m = await message('r6');
    assert.deepEqual(
      [m.clicks, m.bot_clicks, m.first_clicked_at, m.last_human_clicked_at, m.last_human_opened_at, m.opens],
      [1, 2, first, first, first, 1],
      'back to the person’s click before',
    );
    const s = await stats();
    assert.deepEqual(
      [s.total_clicks, s.unique_clicks, s.unique_opens, s.unique_human_opens],
      [s0.total_clicks, s0.unique_clicks, s0.unique_opens, s0.unique_human_opens],
    );
    assert.deepEqual(s.links, s0.links);
    assert.deepEqual(s.timeline, s0.timeline, 'the hour of the burst has nothing left');
    assert.equal(s.bot_clicks - s0.bot_clicks, 2);
  });

  test('a machine open, then a person’s click: the click is the person’s open', async () => {
    const s0 = await stats();
    t.clock.advance(3600_000);
    await open('r7', 'Mozilla/5.0');
    t.clock.advance(60_000);
    await click('r7', 0);
    const m = await message('r7');
    assert.deepEqual([m.opens, m.machine_opens, m.clicks, m.last_human_opened_at, m.last_human_clicked_at], [1, 1, 1, iso(), iso()]);
    const s = await stats();
    assert.deepEqual(
      [s.unique_opens - s0.unique_opens, s.unique_human_opens - s0.unique_human_opens, s.machine_opens - s0.machine_opens],
      [1, 1, 1],
    );
  });
});
