import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { drainQueue } from '../../helpers.js';
import { trackingLinks } from '../../../src/delivery/tracking.js';
import { hrefsOf } from '../clicks.helpers.js';
import { createSegment } from '../segments.helpers.js';
import {
  createSend,
  group,
  messagesOf,
  sendForm,
  setupSends,
  typeWith,
  verifiedSender,
  type SendsContext,
} from '../single-sends.helpers.js';
import { BROWSER, definition, membersOf } from './engagement.helpers.js';

const DESIGN = '<html><body><p>Hello ((first_name))</p><p><a href="https://shop.example.com/spring">Spring</a></p></body></html>';

/**
 * Engagement through the real public routes: a person's open of the pixel, a machine's, and a
 * person's click on a tracked link, as the ledger records them, move contacts into the segments.
 */
describe('engagement conditions after real opens and clicks', () => {
  let t: SendsContext;
  let type: number;
  let utr: string;

  before(async () => {
    t = await setupSends({ sink: true });
    ({ type } = await typeWith(t.a, [['ann@example.com'], ['bob@example.com'], ['cid@example.com']]));
    const base = { sender: await verifiedSender(t, t.a), group: await group(t.a), type };
    utr = await createSend(t.a, sendForm(base, { template_html: DESIGN }));
    await drainQueue(t);
    const links = trackingLinks(t.config);
    const rows = new Map((await messagesOf(t, utr)).map((m) => [m.email_key, m]));
    const pixel = (email: string) => `/t/open/${links.openToken(rows.get(email)!.id)}.gif`;
    // ann opens in a browser; Apple's proxy fetches bob's pixel (`Mozilla/5.0` alone); cid clicks the link in a browser.
    assert.equal((await t.anon.request('GET', pixel('ann@example.com'), { headers: { 'user-agent': BROWSER } })).status, 200);
    assert.equal((await t.anon.request('GET', pixel('bob@example.com'), { headers: { 'user-agent': 'Mozilla/5.0' } })).status, 200);
    const mail = t.sink!.to('cid@example.com')[0];
    const click = hrefsOf(mail.html!).find((h) => h.includes('/t/click/'))!;
    const r = await t.anon.request('GET', new URL(click).pathname, { headers: { 'user-agent': BROWSER } });
    assert.equal(r.status, 302);
  });
  after(() => t.close());

  it("a person's open and click count, a machine's open does not", async () => {
    const members = async (conds: Parameters<typeof definition>[1]) => membersOf(t.a, await createSegment(t.a, definition(type, conds)));
    assert.deepEqual(await members([['engagement', 'received in the last', '1']]), [
      'ann@example.com',
      'bob@example.com',
      'cid@example.com',
    ]);
    assert.deepEqual(await members([['engagement', 'opened in the last', '1']]), ['ann@example.com', 'cid@example.com']);
    assert.deepEqual(await members([['engagement', 'clicked in the last', '1']]), ['cid@example.com']);
    assert.deepEqual(await members([['single_send', 'opened', utr]]), ['ann@example.com', 'cid@example.com']);
    assert.deepEqual(await members([['single_send', 'not opened', utr]]), ['bob@example.com']);
  });
});
