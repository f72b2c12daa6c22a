import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { drainQueue, make } from '../helpers.js';
import { setupSends, verifiedSender, type SendsContext } from '../modules/single-sends.helpers.js';
import { loadConfig, parseTrustProxy } from '../../src/config.js';
import { consentsOf } from '../../src/modules/contacts/contacts.privacy.queries.js';

// app.inject's requests come from 127.0.0.1: that is the socket's peer, the "proxy" in these tests.
const SOCKET = '127.0.0.1';
const LINK = /https:\/\/mail\.example\.test(\/subscribe\/confirm\/[A-Za-z0-9_.-]+)/;
let seq = 0;
const address = () => `proxy.${process.pid}.${++seq}@example.net`;

describe('TRUST_PROXY', () => {
  it('is off when unset, empty, 0 or false', () => {
    for (const raw of [undefined, '', ' ', '0', 'false', 'FALSE']) assert.equal(parseTrustProxy(raw), false, String(raw));
    assert.equal(loadConfig({ DATA_DIR: '/tmp/unused' }, { appSecret: 'x' }).trustProxy, false);
  });

  it('takes a hop count, or a list of addresses and CIDR ranges', () => {
    assert.equal(parseTrustProxy('1'), 1);
    assert.equal(parseTrustProxy(' 2 '), 2);
    assert.deepEqual(parseTrustProxy('10.0.0.1, 10.1.0.0/16,::1, fd00::/8,loopback'), [
      '10.0.0.1',
      '10.1.0.0/16',
      '::1',
      'fd00::/8',
      'loopback',
    ]);
  });

  it('stops the start with the value it cannot take', () => {
    for (const raw of [
      'true',
      'yes',
      '10.0.0.256',
      '10.0.0.0/33',
      '::1/129',
      'proxy.example.com',
      '10.0.0.1,,10.0.0.2',
      '1.2.3.4/8/8',
      '-1',
    ]) {
      assert.throws(
        () => loadConfig({ DATA_DIR: '/tmp/unused', TRUST_PROXY: raw }, { appSecret: 'x' }),
        (e: Error) => e.message.startsWith('TRUST_PROXY must be 0 (trust no proxy), a number of proxy hops, or a comma-separated list'),
        raw,
      );
    }
    assert.throws(() => parseTrustProxy('true'), /would let any client choose its own address/);
  });
});

/** The app with TRUST_PROXY set to `trust` (none: unset), a form, and a way to sign up and confirm. */
function signUpFlow(trust: string | null) {
  const ctx = {} as { t: SendsContext; formId: number };
  before(async () => {
    ctx.t = await setupSends({ sink: true, env: trust === null ? {} : { TRUST_PROXY: trust } });
    const type = await make.contactType(ctx.t.a);
    const sender = await verifiedSender(ctx.t, ctx.t.a);
    const form = await ctx.t.a.post('/forms/create', { name: 'News', contact_type_id: type, sender_id: sender });
    assert.equal(form.status, 200, form.text);
    ctx.formId = form.body.id;
  });
  after(() => ctx.t.close());
  const post = (email: string, forwardedFor: string) =>
    ctx.t.anon.request('POST', `/subscribe/${ctx.formId}`, { form: { email }, headers: { 'x-forwarded-for': forwardedFor } });
  /** Signs `email` up and confirms it, each with its own X-Forwarded-For; the consent's two IPs. */
  const consentIps = async (email: string, postedVia: string, confirmedVia: string) => {
    assert.equal((await post(email, postedVia)).status, 200);
    await drainQueue(ctx.t);
    const [path] = ctx.t.sink!.to(email).map((m) => LINK.exec(m.text ?? '')![1]);
    const done = await ctx.t.anon.request('POST', path, { form: {}, headers: { 'x-forwarded-for': confirmedVia } });
    assert.equal(done.status, 200, done.text);
    const [consent] = await consentsOf(ctx.t.database.db, ctx.t.a.keys!.user_id, email.toLowerCase());
    return [consent.signup_ip, consent.confirm_ip];
  };
  return { ctx, post, consentIps };
}

describe('sign-up client address with no proxy trusted (the default)', () => {
  const { ctx, post, consentIps } = signUpFlow(null);

  it("records the socket's address in the consent, whatever X-Forwarded-For says", async () => {
    assert.deepEqual(await consentIps(address(), '203.0.113.50', '198.51.100.9'), [SOCKET, SOCKET]);
  });

  it('does not let a varied X-Forwarded-For get round the per-IP cap', async () => {
    const answers: number[] = [];
    for (let i = 0; i < 7; i++) answers.push((await post(address(), `198.51.100.${i + 1}`)).status);
    // One sign-up was taken by the test above, from the same socket address.
    assert.deepEqual(answers, [200, 200, 200, 200, 429, 429, 429]);
    const ips = await ctx.t.database.db.selectFrom('signup_pending').select('ip').execute();
    assert.deepEqual(
      ips.map((r) => r.ip),
      [SOCKET, SOCKET, SOCKET, SOCKET],
    );
  });
});

describe('sign-up client address behind a proxy trusted by address', () => {
  const { post, consentIps } = signUpFlow(`${SOCKET}, 10.9.0.0/16`);

  it('takes the client the trusted proxies name, not what the client wrote before them', async () => {
    assert.deepEqual(await consentIps(address(), '203.0.113.7', '198.51.100.9'), ['203.0.113.7', '198.51.100.9']);
    // The client wrote "6.6.6.6" itself; the proxies (10.9.1.1, then the socket) vouch for 203.0.113.8 only.
    assert.deepEqual(await consentIps(address(), '6.6.6.6, 203.0.113.8, 10.9.1.1', '6.6.6.6, 198.51.100.10'), [
      '203.0.113.8',
      '198.51.100.10',
    ]);
  });

  it('counts the per-IP cap by the client the proxy names', async () => {
    const answers: number[] = [];
    for (let i = 0; i < 6; i++) answers.push((await post(address(), `spoof-${i}, 203.0.113.99`)).status);
    assert.deepEqual(answers, [200, 200, 200, 200, 200, 429]);
    assert.equal((await post(address(), '203.0.113.100')).status, 200, 'another client of the proxy');
  });
});

describe('sign-up client address behind one proxy hop', () => {
  const { consentIps } = signUpFlow('1');

  it('takes the address the one proxy saw', async () => {
    assert.deepEqual(await consentIps(address(), '6.6.6.6, 203.0.113.21', '198.51.100.22'), ['203.0.113.21', '198.51.100.22']);
  });

  it('keeps the socket address when no proxy header names one', async () => {
    assert.deepEqual(await consentIps(address(), 'not-an-address', ''), [SOCKET, SOCKET]);
  });
});

describe('sign-up client address when the listed proxies are not in front', () => {
  const { consentIps } = signUpFlow('10.0.0.1');

  it('ignores X-Forwarded-For from a peer that is not a listed proxy', async () => {
    assert.deepEqual(await consentIps(address(), '203.0.113.30', '198.51.100.31'), [SOCKET, SOCKET]);
  });
});
