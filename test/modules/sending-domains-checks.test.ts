import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Zone } from '../support/dns-server.js';
import {
  addDomain,
  checkNow,
  checkOf,
  DMARC_RUA,
  domainsSuite,
  passingZone,
  RELAY_ZONE,
  SPF_INCLUDE,
  type DomainAnswer,
} from './sending-domains.helpers.js';

let seq = 0;

describe('sending domains: the checks against DNS', () => {
  const s = domainsSuite();

  /** A new domain, its zone set by `zone` (from the passing one), checked once. */
  async function checked(zone: (d: DomainAnswer, pass: Zone) => Zone, name = `d${++seq}.example.com`): Promise<DomainAnswer> {
    const d = await addDomain(s.t.a, name);
    s.dns.zone = zone(d, passingZone(d));
    return checkNow(s.t.a, d.id);
  }

  it('passes every check when the records are published: verified, each check saying what it found', async () => {
    const d = await checked((_d, pass) => pass);
    assert.equal(d.status, 'verified');
    assert.deepEqual(
      d.checks.map((c) => [c.name, c.status]),
      [
        ['dkim', 'pass'],
        ['spf', 'pass'],
        ['dmarc', 'pass'],
        ['alignment', 'pass'],
        ['mx', 'pass'],
      ],
    );
    assert.match(checkOf(d, 'spf').message, /One SPF record, 1 of 10 DNS lookups/);
    assert.match(checkOf(d, 'mx').message, new RegExp(`accepts mail at mx\\.${d.domain}`));
    assert.ok(d.last_checked_at);
  });

  it('dkim: absent, another key, a revoked key fail; a CNAME chain to the key passes', async () => {
    const absent = await checked((d, pass) => ({ ...pass, [d.records[0].host]: {} }));
    assert.equal(checkOf(absent, 'dkim').status, 'fail');
    assert.match(
      checkOf(absent, 'dkim').message,
      /^No DKIM key at campaign\._domainkey\.d\d+\.example\.com\. Publish TXT .* with "v=DKIM1; k=rsa; p=/,
    );
    assert.equal(absent.status, 'failed');
    const other = await checked((d, pass) => ({
      ...pass,
      [d.records[0].host]: { TXT: ['v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAother'] },
    }));
    assert.match(checkOf(other, 'dkim').message, /holds another key, not this domain's/);
    const revoked = await checked((d, pass) => ({ ...pass, [d.records[0].host]: { TXT: ['v=DKIM1; p='] } }));
    assert.match(checkOf(revoked, 'dkim').message, /a revoked key/);
    const chain = await checked((d, pass) => ({
      ...pass,
      [d.records[0].host]: { CNAME: `k1.${d.domain}` },
      [`k1.${d.domain}`]: { CNAME: 'keys.provider.test' },
      'keys.provider.test': { TXT: [d.records[0].value] },
    }));
    assert.equal(checkOf(chain, 'dkim').status, 'pass');
  });

  it('spf: none, two records, +all and a bare all fail', async () => {
    const none = await checked((d, pass) => ({ ...pass, [d.domain]: { ...pass[d.domain], TXT: ['unrelated'] } }));
    assert.match(
      checkOf(none, 'spf').message,
      new RegExp(`^No SPF record at d\\d+\\.example\\.com\\. Publish TXT .* with "v=spf1 ${SPF_INCLUDE} ~all"\\.$`),
    );
    const two = await checked((d, pass) => ({
      ...pass,
      [d.domain]: { ...pass[d.domain], TXT: [`v=spf1 ${SPF_INCLUDE} ~all`, 'v=spf1 mx -all'] },
    }));
    assert.equal(checkOf(two, 'spf').status, 'fail');
    assert.match(checkOf(two, 'spf').message, /has 2 SPF records/);
    const plus = await checked((d, pass) => ({ ...pass, [d.domain]: { ...pass[d.domain], TXT: [`v=spf1 ${SPF_INCLUDE} +all`] } }));
    assert.match(checkOf(plus, 'spf').message, /"\+all", which lets anyone send/);
    const bare = await checked((d, pass) => ({ ...pass, [d.domain]: { ...pass[d.domain], TXT: [`v=spf1 ${SPF_INCLUDE} all`] } }));
    assert.match(checkOf(bare, 'spf').message, /a bare "all"/);
    assert.equal(bare.status, 'failed');
  });

  it('spf: 10 lookups through includes pass, a chain of 11 fails naming the count', async () => {
    const chain = (n: number): Zone => {
      const zone: Zone = { ...RELAY_ZONE };
      // SPF_INCLUDE is one lookup; then a chain of n - 1 includes, each one lookup.
      for (let i = 1; i < n; i++)
        zone[`c${i}.chain.test`] = { TXT: [i < n - 1 ? `v=spf1 include:c${i + 1}.chain.test -all` : 'v=spf1 -all'] };
      return zone;
    };
    const ten = await checked((d, pass) => ({
      ...pass,
      ...chain(10),
      [d.domain]: { TXT: [`v=spf1 ${SPF_INCLUDE} include:c1.chain.test ~all`] },
    }));
    assert.equal(checkOf(ten, 'spf').status, 'pass', checkOf(ten, 'spf').message);
    assert.match(checkOf(ten, 'spf').message, /10 of 10 DNS lookups/);
    const eleven = await checked((d, pass) => ({
      ...pass,
      ...chain(11),
      [d.domain]: { TXT: [`v=spf1 ${SPF_INCLUDE} include:c1.chain.test ~all`] },
    }));
    assert.equal(checkOf(eleven, 'spf').status, 'fail');
    assert.match(checkOf(eleven, 'spf').message, /needs 11 DNS lookups through its includes; receivers stop at 10/);
    const terms = await checked((d, pass) => ({
      ...pass,
      [d.domain]: { TXT: [`v=spf1 ${SPF_INCLUDE} a mx a:x.test mx:y.test exists:z.test ptr a mx a:q.test mx:r.test ~all`] },
    }));
    assert.match(checkOf(terms, 'spf').message, /needs 11 DNS lookups/);
  });

  it('spf: the installation’s include is needed, directly or through an include; loops and empty includes fail', async () => {
    const missing = await checked((d, pass) => ({ ...pass, [d.domain]: { TXT: ['v=spf1 ip4:198.51.100.1 ~all'] } }));
    assert.match(checkOf(missing, 'spf').message, new RegExp(`lacks ${SPF_INCLUDE}: mail through this service fails SPF`));
    const nested = await checked((d, pass) => ({
      ...pass,
      [d.domain]: { TXT: ['v=spf1 include:_spf.company.test ~all'] },
      '_spf.company.test': { TXT: [`v=spf1 ${SPF_INCLUDE} -all`] },
    }));
    assert.equal(checkOf(nested, 'spf').status, 'pass', checkOf(nested, 'spf').message);
    const loop = await checked((d, pass) => ({
      ...pass,
      [d.domain]: { TXT: [`v=spf1 ${SPF_INCLUDE} include:a.loop.test ~all`] },
      'a.loop.test': { TXT: ['v=spf1 include:b.loop.test -all'] },
      'b.loop.test': { TXT: ['v=spf1 include:a.loop.test -all'] },
    }));
    assert.match(
      checkOf(loop, 'spf').message,
      /^The SPF includes loop: d\d+\.example\.com → a\.loop\.test → b\.loop\.test → a\.loop\.test\.$/,
    );
    const empty = await checked((d, pass) => ({ ...pass, [d.domain]: { TXT: [`v=spf1 ${SPF_INCLUDE} include:nothing.test ~all`] } }));
    assert.match(checkOf(empty, 'spf').message, /include:nothing\.test has no SPF record/);
  });

  it('dmarc: p=none and no rua warn; none, two or an invalid p fail', async () => {
    const dm = (value: string[]) => (d: DomainAnswer, pass: Zone) => ({ ...pass, [`_dmarc.${d.domain}`]: { TXT: value } });
    const monitoring = await checked(dm([`v=DMARC1; p=none; rua=mailto:${DMARC_RUA}`]));
    assert.equal(checkOf(monitoring, 'dmarc').status, 'warn');
    assert.match(checkOf(monitoring, 'dmarc').message, /p=none: receivers only monitor/);
    assert.equal(monitoring.status, 'verified');
    const noRua = await checked(dm(['v=DMARC1; p=quarantine']));
    assert.match(checkOf(noRua, 'dmarc').message, /no rua=/);
    const absent = await checked(dm([]));
    assert.equal(checkOf(absent, 'dmarc').status, 'fail');
    assert.match(
      checkOf(absent, 'dmarc').message,
      /^No DMARC record at _dmarc\.d\d+\.example\.com nor at _dmarc\.example\.com\. Publish TXT/,
    );
    const invalid = await checked(dm(['v=DMARC1; p=maybe']));
    assert.match(checkOf(invalid, 'dmarc').message, /an invalid policy p=maybe/);
    const two = await checked(dm(['v=DMARC1; p=reject', 'v=DMARC1; p=none']));
    assert.match(checkOf(two, 'dmarc').message, /has 2 DMARC records/);
  });

  it('dmarc: a subdomain takes the organisational domain’s record (Public Suffix List default rule)', async () => {
    const d = await checked((d, pass) => {
      const zone: Zone = { ...pass, '_dmarc.example.test': { TXT: [`v=DMARC1; p=none; sp=reject; rua=mailto:${DMARC_RUA}`] } };
      delete zone[`_dmarc.${d.domain}`];
      return zone;
    }, 'mail.a.example.test');
    assert.equal(checkOf(d, 'dmarc').status, 'pass', checkOf(d, 'dmarc').message);
    assert.match(checkOf(d, 'dmarc').message, /_dmarc\.example\.test \(the organisational domain's\) has p=reject/);
  });

  it('mx: an MX or an address passes; a null MX or nothing warns', async () => {
    const mx = (entry: object) => (d: DomainAnswer, pass: Zone) => ({ ...pass, [d.domain]: { TXT: pass[d.domain].TXT, ...entry } });
    assert.equal(checkOf(await checked(mx({ A: ['192.0.2.7'] })), 'mx').status, 'pass');
    const nullMx = await checked(mx({ MX: [{ priority: 0, exchange: '.' }] }));
    assert.equal(checkOf(nullMx, 'mx').status, 'warn');
    assert.match(checkOf(nullMx, 'mx').message, /null MX/);
    const nothing = await checked(mx({}));
    assert.equal(checkOf(nothing, 'mx').status, 'warn');
    assert.equal(nothing.status, 'verified');
  });

  it('SERVFAIL and a server that never answers: warn "DNS did not answer" and keep the status, within 10 s', async () => {
    const d = await checked((_d, pass) => pass);
    assert.equal(d.status, 'verified');
    s.dns.zone = { ...passingZone(d), [d.domain]: { servfail: true } };
    const servfail = await checkNow(s.t.a, d.id);
    assert.equal(servfail.status, 'verified');
    assert.equal(checkOf(servfail, 'spf').status, 'warn');
    assert.match(checkOf(servfail, 'spf').message, /^DNS did not answer for d\d+\.example\.com/);
    s.dns.zone = { ...passingZone(d), [d.records[0].host]: { silent: true }, [d.domain]: { silent: true } };
    const started = Date.now();
    const silent = await checkNow(s.t.a, d.id);
    assert.ok(Date.now() - started < 10_000, `answered in ${Date.now() - started} ms`);
    assert.equal(silent.status, 'verified');
    assert.equal(checkOf(silent, 'dkim').status, 'warn');
    assert.match(checkOf(silent, 'dkim').message, /DNS did not answer/);
    // A failing domain stays failed while DNS is away.
    s.dns.zone = { ...passingZone(d), [d.records[0].host]: {} };
    assert.equal((await checkNow(s.t.a, d.id)).status, 'failed');
    s.dns.zone = { ...passingZone(d), [d.records[0].host]: { servfail: true } };
    assert.equal((await checkNow(s.t.a, d.id)).status, 'failed');
  });

  it('a slow server within the bound is waited for; a slower one is a bounded warn', async () => {
    const d = await checked((d, pass) => ({ ...pass, [`_dmarc.${d.domain}`]: { ...pass[`_dmarc.${d.domain}`], delayMs: 400 } }));
    assert.equal(checkOf(d, 'dmarc').status, 'pass');
    s.dns.zone = { ...passingZone(d), [`_dmarc.${d.domain}`]: { delayMs: 6000, TXT: ['v=DMARC1; p=reject'] } };
    const started = Date.now();
    const slow = await checkNow(s.t.a, d.id);
    assert.ok(Date.now() - started < 10_000);
    assert.match(checkOf(slow, 'dmarc').message, /DNS did not answer/);
  });

  it('TXT answers of 64 KB get a clear result, never a 500', async () => {
    const big = 'v=spf1 ' + 'ip4:192.0.2.1 '.repeat(4400) + `${SPF_INCLUDE} ~all`;
    assert.ok(big.length > 60_000);
    const d = await checked((d, pass) => ({
      ...pass,
      [d.domain]: { TXT: [big] },
      [d.records[0].host]: { TXT: ['v=DKIM1; k=rsa; p=' + 'A'.repeat(60_000)] },
    }));
    assert.equal(checkOf(d, 'spf').status, 'pass', checkOf(d, 'spf').message);
    assert.ok(checkOf(d, 'spf').message.length < 400);
    assert.equal(checkOf(d, 'dkim').status, 'fail');
  });
});
