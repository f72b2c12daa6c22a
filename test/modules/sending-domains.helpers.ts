import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import type { Client } from '../helpers.js';
import { TestDnsServer, type Zone } from '../support/dns-server.js';
import { setupSends, type SendsContext } from './single-sends.helpers.js';

/** The installation's SPF terms in these suites. */
export const SPF_INCLUDE = 'include:_spf.relay.test';
export const DMARC_RUA = 'dmarc@reports.test';

/** A sending domain as the API answers it. */
export interface DomainAnswer {
  id: number;
  domain: string;
  display_domain: string;
  dkim_selector: string;
  status: 'pending' | 'verified' | 'failed';
  records: Array<{ type: 'TXT'; host: string; value: string; purpose: 'dkim' | 'spf' | 'dmarc' }>;
  checks: Array<{ name: string; status: 'pass' | 'warn' | 'fail'; message: string }>;
  last_checked_at: string | null;
  created_at: string;
}

/** The relay's own SPF record, which the domains' records include. */
export const RELAY_ZONE: Zone = { '_spf.relay.test': { TXT: ['v=spf1 ip4:192.0.2.0/24 -all'] } };

/**
 * The zone of a domain that passes every check: its records as the API gives them, an MX, and
 * DMARC at p=reject with reports (so no warning), over `extra`.
 */
export function passingZone(d: DomainAnswer, extra: Zone = {}): Zone {
  const rec = (p: string) => d.records.find((r) => r.purpose === p)!;
  return {
    ...RELAY_ZONE,
    [rec('dkim').host]: { TXT: [rec('dkim').value] },
    [d.domain]: { TXT: [rec('spf').value, 'google-site-verification=abc'], MX: [{ priority: 10, exchange: `mx.${d.domain}` }] },
    [`_dmarc.${d.domain}`]: { TXT: [`v=DMARC1; p=reject; rua=mailto:${DMARC_RUA}`] },
    ...extra,
  };
}

/**
 * Registers a suite: a loopback DNS server (`dns`, its zone set by each test) and the app pointed
 * at it (DNS_SERVERS), with SPF_INCLUDE and DMARC_RUA set, on a test clock; with `sink`, mail goes
 * to a real SMTP server.
 */
export function domainsSuite(opts: { sink?: boolean; env?: Record<string, string> } = {}) {
  const s = {} as { t: SendsContext; dns: TestDnsServer };
  before(async () => {
    s.dns = await TestDnsServer.start();
    s.t = await setupSends({
      sink: opts.sink,
      env: { DNS_SERVERS: s.dns.address, SPF_INCLUDE, DMARC_RUA, ...opts.env },
    });
  });
  after(async () => {
    await s.t.close();
    await s.dns.close();
  });
  return s;
}

/** Adds a sending domain; returns it as the API answers it. */
export async function addDomain(c: Client, domain: string, extra: Record<string, unknown> = {}): Promise<DomainAnswer> {
  const r = await c.post('/sending-domains/create', { domain, ...extra });
  assert.equal(r.status, 200, r.text);
  return r.body.message.domain;
}

/** Checks a domain now; returns it as the API answers it. */
export async function checkNow(c: Client, id: number): Promise<DomainAnswer> {
  const r = await c.post('/sending-domains/check', { id });
  assert.equal(r.status, 200, r.text);
  return r.body.message.domain;
}

/** One check of a domain by name. */
export const checkOf = (d: DomainAnswer, name: string) => d.checks.find((c) => c.name === name)!;
