import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { trackingLinks } from '../../src/delivery/tracking.js';
import { createTokens } from '../../src/util/tokens.js';
import { PIXEL } from '../../src/public/tracking.routes.js';
import { setup, type TestContext } from '../helpers.js';
import { seedSingleSend, type SeededSend } from './seed.js';

describe('GET /t/open/<token>.gif', () => {
  let t: TestContext;
  let links: ReturnType<typeof trackingLinks>;
  let send: SeededSend;
  before(async () => {
    t = await setup();
    links = trackingLinks(t.config);
    const emails = Array.from({ length: 6 }, (_, i) => `reader${i}@example.com`);
    send = await seedSingleSend(t.database.db, t.a.keys!.user_id, emails);
  });
  after(() => t.close());

  const stats = () =>
    t.database.db
      .selectFrom('single_sends')
      .select(['total_opens', 'unique_opens'])
      .where('id', '=', send.sendId)
      .executeTakeFirstOrThrow();
  const message = (id: number) =>
    t.database.db.selectFrom('mail_messages').select(['opens', 'first_opened_at']).where('id', '=', id).executeTakeFirstOrThrow();
  const open = (token: string) => t.anon.get(`/t/open/${token}.gif`);

  function assertPixel(r: { status: number; headers: Record<string, unknown>; text: string }, raw?: Buffer) {
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'image/gif');
    assert.equal(r.headers['cache-control'], 'no-store');
    assert.equal(r.headers['content-length'], String(PIXEL.length));
    if (raw) assert.deepEqual(raw, PIXEL);
  }

  it('answers a 1×1 transparent GIF, never cached, with no keys', async () => {
    assert.equal(PIXEL.subarray(0, 6).toString('latin1'), 'GIF89a');
    assert.equal(PIXEL.readUInt16LE(6), 1); // width
    assert.equal(PIXEL.readUInt16LE(8), 1); // height
    const res = await t.app.inject({ method: 'GET', url: `/t/open/${links.openToken(send.messageIds[5])}.gif` });
    assertPixel({ status: res.statusCode, headers: res.headers, text: res.body }, res.rawPayload);
  });

  it('counts every open in total_opens and the first of each message once in unique_opens', async () => {
    const before = await stats();
    const [m0, m1] = send.messageIds;
    t.app.deps.clock = { now: () => new Date('2031-02-03T04:05:06.000Z') };
    assertPixel(await open(links.openToken(m0)));
    assert.deepEqual(await message(m0), { opens: 1, first_opened_at: '2031-02-03T04:05:06.000000Z' });
    t.app.deps.clock = { now: () => new Date('2031-02-04T00:00:00.000Z') };
    assertPixel(await open(links.openToken(m0)));
    assertPixel(await open(links.openToken(m1)));
    // The first open's time stays.
    assert.deepEqual(await message(m0), { opens: 2, first_opened_at: '2031-02-03T04:05:06.000000Z' });
    assert.deepEqual(await message(m1), { opens: 1, first_opened_at: '2031-02-04T00:00:00.000000Z' });
    const now = await stats();
    assert.equal(now.total_opens - before.total_opens, 3);
    assert.equal(now.unique_opens - before.unique_opens, 2);
  });

  it('counts one unique open for concurrent first opens of one message', async () => {
    const before = await stats();
    const id = send.messageIds[2];
    const token = links.openToken(id);
    const answers = await Promise.all(Array.from({ length: 12 }, () => open(token)));
    for (const r of answers) assertPixel(r);
    assert.equal((await message(id)).opens, 12);
    const now = await stats();
    assert.equal(now.total_opens - before.total_opens, 12);
    assert.equal(now.unique_opens - before.unique_opens, 1);
  });

  it('answers the same image to forged, altered and other-purpose tokens, and counts nothing', async () => {
    const id = send.messageIds[3];
    const genuine = links.openToken(id);
    const [body, mac] = genuine.split('.');
    const flip = (s: string) => s.slice(0, -1) + (s.endsWith('A') ? 'B' : 'A');
    const otherBody = Buffer.from(JSON.stringify([{ m: send.messageIds[4] }, 0])).toString('base64url');
    const bad = [
      'nonsense',
      '',
      `${body}.${flip(mac)}`, // altered signature
      `${otherBody}.${mac}`, // another message's id under this signature
      links.unsubscribeToken(id), // signed, for another purpose
      createTokens('another-secret').sign('open', { m: id }), // signed with another secret
      links.openToken(999_999_999), // genuine, but no such message
      'x'.repeat(99), // the router refuses longer path parameters (414); real tokens are about 65 characters
    ];
    const before = await stats();
    for (const token of bad) assertPixel(await open(token));
    assert.deepEqual(await message(id), { opens: 0, first_opened_at: null });
    assert.deepEqual(await message(send.messageIds[4]), { opens: 0, first_opened_at: null });
    assert.deepEqual(await stats(), before);
    // The genuine token still counts after all that.
    await open(genuine);
    assert.equal((await message(id)).opens, 1);
  });

  it('counts nothing for a HEAD request (link checkers), and still answers the headers', async () => {
    const id = send.messageIds[4];
    const r = await t.anon.request('HEAD', `/t/open/${links.openToken(id)}.gif`);
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'image/gif');
    assert.deepEqual(await message(id), { opens: 0, first_opened_at: null });
  });
});
