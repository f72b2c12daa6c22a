/**
 * The address rule of webhook URLs, judged on URLs whose host is an IP address literal only: the
 * filter is called on the host as the URL parser gives it, nothing is resolved and nothing is
 * connected to. The API check at the end uses literals too (they resolve to themselves).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hostOf, isPublicAddress, PRIVATE_ADDRESS } from '../../../src/events/webhooks.address.js';
import { fieldErrors, setup, type TestContext } from '../../helpers.js';

const judge = (url: string) => isPublicAddress(hostOf(new URL(url)));

/** URLs that lead to an address that is not public, however the address is written. */
const REFUSED = [
  // IPv4 in its other spellings: the URL parser gives 127.0.0.1 or 0.0.0.0 for each.
  'http://2130706433/',
  'http://0x7f.1/',
  'http://0x7f000001/',
  'http://017700000001/',
  'http://0177.0.0.1/',
  'http://127.1/',
  'http://0/',
  'http://0.0.0.0/',
  'http://[::]/',
  'http://[::1]/',
  // IPv4-compatible IPv6 (deprecated): the last 32 bits are the IPv4 address.
  'http://[::127.0.0.1]/',
  'http://[::7f00:1]/',
  'http://[::10.0.0.1]/',
  'http://[::169.254.169.254]/',
  // IPv4-mapped and IPv4-translated.
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://[::ffff:192.168.1.1]/',
  'http://[::ffff:0:7f00:1]/',
  // NAT64: the well-known prefix with a private IPv4, and any local-use prefix.
  'http://[64:ff9b::7f00:1]/',
  'http://[64:ff9b::169.254.169.254]/',
  'http://[64:ff9b:1::5db8:d822]/',
  // 6to4 around a loopback or private router.
  'http://[2002:7f00:1::]/',
  'http://[2002:a00:1::1]/',
  // Teredo: a loopback client (bits inverted: 80ff:fffe), or a private server.
  'http://[2001:0:5db8:d822::80ff:fffe]/',
  'http://[2001:0:a00:1::a247:27dd]/',
  // The usual ranges.
  'http://10.1.2.3/',
  'http://172.16.0.1/',
  'http://192.168.0.1/',
  'http://169.254.169.254/latest/meta-data',
  'http://100.64.0.1/',
  'http://224.0.0.1/',
  'http://255.255.255.255/',
  'http://192.0.2.1/',
  'http://[fe80::1]/',
  'http://[fd00::1]/',
  'http://[ff02::1]/',
  'http://[2001:db8::1]/',
];

/** Public addresses, including IPv6 forms that carry a public IPv4 address. */
const ADMITTED = [
  'https://93.184.216.34/hook',
  'https://[2606:2800:220:1:248:1893:25c8:1946]/hook',
  'http://[::ffff:93.184.216.34]/',
  'http://[64:ff9b::93.184.216.34]/',
  'http://[2002:5db8:d822::1]/',
  'http://[2001:0:5db8:d822::a247:27dd]/',
];

describe('the webhook address filter', () => {
  for (const url of REFUSED) it(`refuses ${url}`, () => assert.equal(judge(url), false));
  for (const url of ADMITTED) it(`admits ${url}`, () => assert.equal(judge(url), true));

  it('refuses what is no IP address at all', () => {
    for (const text of ['', 'localhost', 'example.com', '::ffff:999.0.0.1']) assert.equal(isPublicAddress(text), false, text);
  });
});

describe('webhook endpoint URLs with an IPv6 host that carries a private IPv4 address', () => {
  let t: TestContext;
  before(async () => (t = await setup()));
  after(() => t.close());

  for (const url of ['http://[::127.0.0.1]/hook', 'http://[64:ff9b::7f00:1]/hook', 'http://2130706433/hook']) {
    it(`are refused on create and on update: ${url}`, async () => {
      const created = await t.a.post('/webhooks/endpoints/create', { url, events: ['*'] });
      assert.deepEqual([created.status, created.body], [422, fieldErrors({ url: [PRIVATE_ADDRESS] })]);
      const ok = await t.a.post('/webhooks/endpoints/create', { url: 'https://93.184.216.34/hook', events: ['*'] });
      assert.equal(ok.status, 200, ok.text);
      const updated = await t.a.post('/webhooks/endpoints/update', { id: ok.body.message.id, url });
      assert.deepEqual([updated.status, updated.body], [422, fieldErrors({ url: [PRIVATE_ADDRESS] })]);
    });
  }
});
