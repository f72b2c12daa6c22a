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
    const res = await t.app.inject({ method: 'GET', url: `/t/open/${links.openToken(send.messageIds[5])}.gif` });
    assertPixel({ status: res.statusCode, headers: res.headers, text: res.body }, res.rawPayload);
  });

  it('serves a complete 43-byte GIF: 1×1, transparent, its LZW data closed by end-of-information, then the trailer', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/t/open/${links.openToken(send.messageIds[5])}.gif` });
    const gif = res.rawPayload;
    assert.equal(gif.length, 43);
    assert.equal(gif.subarray(0, 6).toString('latin1'), 'GIF89a');
    assert.equal(gif.readUInt16LE(6), 1, 'logical screen width');
    assert.equal(gif.readUInt16LE(8), 1, 'logical screen height');
    assert.equal(gif[gif.length - 1], 0x3b, 'trailer');
    assert.deepEqual(decodeGif(gif), { width: 1, height: 1, pixels: [0], transparentIndex: 0 });
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

/**
 * A strict decoder of a GIF with one image and a global colour table: the image's pixels (colour
 * indexes) and the transparent index. Throws on anything malformed, in particular LZW data that
 * ends before its end-of-information code, or bytes after the trailer.
 */
function decodeGif(gif: Buffer): { width: number; height: number; pixels: number[]; transparentIndex: number | null } {
  let at = 13;
  const packed = gif[10];
  if (packed & 0x80) at += 3 * (1 << ((packed & 7) + 1));
  let transparentIndex: number | null = null;
  while (gif[at] === 0x21) {
    // An extension: the graphic control one (0xf9) names the transparent colour.
    if (gif[at + 1] === 0xf9 && gif[at + 3] & 1) transparentIndex = gif[at + 6];
    at += 2;
    while (gif[at] !== 0) at += gif[at] + 1;
    at += 1;
  }
  assert.equal(gif[at], 0x2c, 'image descriptor');
  const width = gif.readUInt16LE(at + 5);
  const height = gif.readUInt16LE(at + 7);
  assert.equal(gif[at + 9] & 0x80, 0, 'no local colour table');
  at += 10;
  const minCodeSize = gif[at++];
  const data: number[] = [];
  while (gif[at] !== 0) {
    data.push(...gif.subarray(at + 1, at + 1 + gif[at]));
    at += gif[at] + 1;
  }
  at += 1;
  assert.equal(at, gif.length - 1, 'only the trailer follows the image');
  assert.equal(gif[at], 0x3b);
  const clear = 1 << minCodeSize;
  const eoi = clear + 1;
  let size = minCodeSize + 1;
  let bit = 0;
  const read = () => {
    if (bit + size > data.length * 8) throw new Error('LZW data ends before the end-of-information code');
    let code = 0;
    for (let i = 0; i < size; i++, bit++) code |= ((data[bit >> 3] >> (bit & 7)) & 1) << i;
    return code;
  };
  let table: number[][] = [];
  const reset = () => {
    table = Array.from({ length: clear + 2 }, (_, i) => [i]);
    size = minCodeSize + 1;
  };
  reset();
  const pixels: number[] = [];
  let prev: number[] | null = null;
  for (;;) {
    const code = read();
    if (code === clear) {
      reset();
      prev = null;
      continue;
    }
    if (code === eoi) break;
    const entry: number[] = code < table.length ? table[code] : [...prev!, prev![0]];
    if (prev) table.push([...prev, entry[0]]);
    if (table.length === 1 << size && size < 12) size++;
    pixels.push(...entry);
    prev = entry;
  }
  assert.equal(pixels.length, width * height, 'one index per pixel');
  return { width, height, pixels, transparentIndex };
}
