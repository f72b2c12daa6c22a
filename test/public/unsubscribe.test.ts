import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { trackingLinks } from '../../src/delivery/tracking.js';
import { setup, type TestContext } from '../helpers.js';
import { seedGroup, seedSingleSend, type SeededSend } from './seed.js';

const URLENCODED = { 'content-type': 'application/x-www-form-urlencoded' };

/** A multipart/form-data body with the given fields, as a mail provider's one-click POST sends it. */
function multipart(fields: Record<string, string>): { payload: string; headers: Record<string, string> } {
  const boundary = '----campaign' + Date.now();
  const payload =
    Object.entries(fields)
      .map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
      .join('') + `--${boundary}--\r\n`;
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

describe('the unsubscribe pages: GET and POST /u/<token>', () => {
  let t: TestContext;
  let links: ReturnType<typeof trackingLinks>;
  let userId: number;
  let send: SeededSend;
  let shown: number;
  let hidden: number;
  const emails = Array.from({ length: 8 }, (_, i) => `o'reader${i}@example.com`);

  before(async () => {
    t = await setup();
    links = trackingLinks(t.config);
    userId = t.a.keys!.user_id;
    const db = t.database.db;
    shown = await seedGroup(db, userId, '<script>alert(1)</script> News', 1, 'Monthly "news" & <b>offers</b>');
    hidden = await seedGroup(db, userId, 'Hidden receipts', 0);
    await seedGroup(db, t.b.keys!.user_id, 'Other account group', 1);
    const own = await seedGroup(db, userId, 'Spring campaign', 0);
    send = await seedSingleSend(db, userId, emails, { groupId: own });
  });
  after(() => t.close());

  const db = () => t.database.db;
  const unsubscribes = async () =>
    (await db().selectFrom('single_sends').select('unsubscribes').where('id', '=', send.sendId).executeTakeFirstOrThrow()).unsubscribes;
  /** The lists an address is on: 'global' and group ids, sorted. */
  const listsOf = async (email: string) =>
    (
      await db()
        .selectFrom('unsubscribers')
        .select('unsubscribe_groups_id')
        .where('user_id', '=', userId)
        .where('email_key', '=', email.toLowerCase())
        .execute()
    )
      .map((r) => r.unsubscribe_groups_id ?? 'global')
      .sort();
  const flag = async (id: number) =>
    (await db().selectFrom('mail_messages').select('unsubscribed').where('id', '=', id).executeTakeFirstOrThrow()).unsubscribed;
  const page = (i: number) => `/u/${links.unsubscribeToken(send.messageIds[i])}`;
  const post = (path: string, payload: string, headers: Record<string, string> = URLENCODED) =>
    t.anon.request('POST', path, { payload, headers });

  function assertHtmlPage(r: { status: number; headers: Record<string, unknown> }, status = 200) {
    assert.equal(r.status, status);
    assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
    const csp = String(r.headers['content-security-policy']);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /form-action 'self'/);
    assert.match(csp, /style-src 'sha256-[A-Za-z0-9+/]+=*'/);
    assert.doesNotMatch(csp, /script-src|unsafe/);
    assert.equal(r.headers['cache-control'], 'no-store');
    assert.equal(r.headers['referrer-policy'], 'no-referrer');
    assert.equal(r.headers['set-cookie'], undefined);
  }

  it("shows the preferences page: escaped, strict CSP, the shown groups and the send's own, nothing else", async () => {
    const r = await t.anon.get(page(0));
    assertHtmlPage(r);
    assert.match(r.text, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
    assert.ok(!r.text.includes('<script'), 'no script element, and the group name escaped');
    assert.ok(r.text.includes('&lt;script&gt;alert(1)&lt;/script&gt; News'));
    assert.ok(r.text.includes('Monthly &quot;news&quot; &amp; &lt;b&gt;offers&lt;/b&gt;'));
    assert.ok(r.text.includes('o&#39;reader0@example.com'));
    assert.ok(r.text.includes('Spring campaign'), "the send's own group, though not shown on pages");
    assert.ok(!r.text.includes('Hidden receipts'));
    assert.ok(!r.text.includes('Other account group'));
    assert.match(r.text, /<form method="post">/);
    assert.match(r.text, new RegExp(`name="groups" value="${shown}">`));
    assert.match(r.text, new RegExp(`name="groups" value="${send.groupId}">`));
    assert.match(r.text, /name="global" value="1">/, 'nothing checked yet');
    // The CSP's hash is the hash of the page's one style block.
    const style = /<style>([^<]*)<\/style>/.exec(r.text)![1];
    const { createHash } = await import('node:crypto');
    assert.ok(String(r.headers['content-security-policy']).includes(createHash('sha256').update(style).digest('base64')));
    assert.deepEqual(await listsOf(emails[0]), [], 'GET changes nothing');
  });

  it("one-click (urlencoded) unsubscribes from the send's group and counts once; a second POST counts nothing", async () => {
    const before = await unsubscribes();
    for (let i = 0; i < 2; i++) {
      const r = await post(page(1), 'List-Unsubscribe=One-Click');
      assertHtmlPage(r);
      assert.match(r.text, /unsubscribed/);
      assert.equal(r.headers.location, undefined);
    }
    assert.deepEqual(await listsOf(emails[1]), [send.groupId]);
    assert.equal(await flag(send.messageIds[1]), 1);
    assert.equal(await unsubscribes(), before + 1);
    // Now the page shows the group checked.
    const r = await t.anon.get(page(1));
    assert.match(r.text, new RegExp(`name="groups" value="${send.groupId}" checked>`));
  });

  it('one-click as multipart/form-data works alike', async () => {
    const before = await unsubscribes();
    const m = multipart({ 'List-Unsubscribe': 'One-Click' });
    assertHtmlPage(await post(page(2), m.payload, m.headers));
    assertHtmlPage(await post(page(2), m.payload, m.headers));
    assert.deepEqual(await listsOf(emails[2]), [send.groupId]);
    assert.equal(await unsubscribes(), before + 1);
  });

  it('the form applies global and group choices; unchecking re-subscribes; the count stays one per message', async () => {
    const before = await unsubscribes();
    let r = await post(page(3), `preferences=1&global=1&groups=${shown}`);
    assertHtmlPage(r);
    assert.match(r.text, /Your preferences are saved/);
    assert.match(r.text, /name="global" value="1" checked>/);
    assert.deepEqual(await listsOf(emails[3]), [shown, 'global'].sort());
    assert.equal(await unsubscribes(), before + 1, 'global stops this mail: counted');
    // Posting the same choice again changes nothing.
    await post(page(3), `preferences=1&global=1&groups=${shown}`);
    assert.deepEqual(await listsOf(emails[3]), [shown, 'global'].sort());
    // Off the global list and the shown group, onto the send's own group: re-subscribed, no new count.
    r = await post(page(3), `preferences=1&groups=${send.groupId}`);
    assertHtmlPage(r);
    assert.deepEqual(await listsOf(emails[3]), [send.groupId]);
    assert.equal(await unsubscribes(), before + 1);
    // Everything off, then one-click again: the message counted already.
    await post(page(3), 'preferences=1');
    assert.deepEqual(await listsOf(emails[3]), []);
    await post(page(3), 'List-Unsubscribe=One-Click');
    assert.deepEqual(await listsOf(emails[3]), [send.groupId]);
    assert.equal(await unsubscribes(), before + 1);
  });

  it("counts only unsubscribes that stop this send's mail: another group alone does not count", async () => {
    const before = await unsubscribes();
    const m = multipart({ preferences: '1', groups: String(shown) });
    assertHtmlPage(await post(page(4), m.payload, m.headers));
    assert.deepEqual(await listsOf(emails[4]), [shown]);
    assert.equal(await flag(send.messageIds[4]), 0);
    assert.equal(await unsubscribes(), before);
    // Two groups at once in a browser's repeated-name form.
    await post(page(4), `preferences=1&groups=${shown}&groups=${send.groupId}`);
    assert.deepEqual(await listsOf(emails[4]), [shown, send.groupId].sort());
    assert.equal(await unsubscribes(), before + 1);
  });

  it('refuses a form it cannot read (400 page), changing nothing', async () => {
    for (const body of [
      `preferences=1&groups=${hidden}`,
      'preferences=1&groups=abc',
      'preferences=2&global=1',
      'global=1',
      '',
      'List-Unsubscribe=Maybe',
    ]) {
      const r = await post(page(5), body);
      assertHtmlPage(r, 400);
      assert.match(r.text, /Nothing changed/, body);
    }
    assert.deepEqual(await listsOf(emails[5]), []);
  });

  it('answers a 404 page to forged, altered and other-purpose tokens, and changes nothing', async () => {
    const id = send.messageIds[6];
    const genuine = links.unsubscribeToken(id);
    const [body, mac] = genuine.split('.');
    const otherBody = Buffer.from(JSON.stringify([{ m: send.messageIds[7] }, 0])).toString('base64url');
    const before = await unsubscribes();
    for (const token of [
      'nonsense',
      `${body}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`,
      `${otherBody}.${mac}`,
      links.openToken(id),
      links.unsubscribeToken(999_999_999),
    ]) {
      assertHtmlPage(await t.anon.get(`/u/${token}`), 404);
      const r = await post(`/u/${token}`, 'List-Unsubscribe=One-Click');
      assertHtmlPage(r, 404);
      assert.match(r.text, /not valid/);
      assertHtmlPage(await post(`/u/${token}`, 'preferences=1&global=1'), 404);
    }
    assert.deepEqual(await listsOf(emails[6]), []);
    assert.deepEqual(await listsOf(emails[7]), []);
    assert.equal(await unsubscribes(), before);
  });
});
