import { getDomain } from 'tldts';
import type { Config } from '../../config.js';
import type { Answer, Dns } from './sending-domains.dns.js';
import { isSpf, SPF_LOOKUP_LIMIT, spfTerms, walkSpf } from './sending-domains.spf.js';

export const CHECK_NAMES = ['dkim', 'spf', 'dmarc', 'alignment', 'mx'] as const;
export type CheckName = (typeof CHECK_NAMES)[number];
export type CheckStatus = 'pass' | 'warn' | 'fail';

/** One check as the API shows it. */
export interface Check {
  name: CheckName;
  status: CheckStatus;
  message: string;
}

/** A check as it ran: `unanswered` when DNS did not answer, which says nothing about the domain. */
export type CheckRun = Check & { unanswered?: boolean };

/** What the checks need to know of a domain. */
export interface CheckedDomain {
  domain: string;
  dkim_selector: string;
  public_key: string;
}

/** A whole check run never takes longer than this, whatever DNS does (each question is bounded too). */
export const CHECK_DEADLINE_MS = 8000;

const noAnswer = (name: CheckName, asked: string): CheckRun => ({
  name,
  status: 'warn',
  message: `DNS did not answer for ${asked}; the previous result stands until it does.`,
  unanswered: true,
});

const quote = (s: string, max = 120) => (s.length > max ? `"${s.slice(0, max)}…" (${s.length} characters)` : `"${s}"`);

/**
 * The organisational domain (the registrable domain by the Public Suffix List; its default rule
 * makes `mail.a.example.test` belong to `example.test`); the name itself when it has none.
 */
export function organisationalDomain(name: string): string {
  return getDomain(name, { allowPrivateDomains: false }) ?? name;
}

/** `k=v` tags of a DKIM or DMARC record (keys lower case). Linear: one split on `;`. */
export function tagsOf(record: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of record.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) tags.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).trim());
  }
  return tags;
}

/** The records to publish for a domain: DKIM, SPF and DMARC. */
export function recordsFor(config: Pick<Config, 'spfInclude' | 'dmarcRua'>, d: CheckedDomain) {
  const spf = ['v=spf1', config.spfInclude, '~all'].filter(Boolean).join(' ');
  return [
    { type: 'TXT', host: `${d.dkim_selector}._domainkey.${d.domain}`, value: `v=DKIM1; k=rsa; p=${d.public_key}`, purpose: 'dkim' },
    { type: 'TXT', host: d.domain, value: spf, purpose: 'spf' },
    {
      type: 'TXT',
      host: `_dmarc.${d.domain}`,
      value: `v=DMARC1; p=none; rua=mailto:${config.dmarcRua ?? `postmaster@${d.domain}`}`,
      purpose: 'dmarc',
    },
  ] as const;
}

async function checkDkim(dns: Dns, d: CheckedDomain, publish: string): Promise<CheckRun> {
  const host = `${d.dkim_selector}._domainkey.${d.domain}`;
  const answer = await dns.txt(host);
  if (answer.kind === 'unanswered') return noAnswer('dkim', host);
  const found = answer.kind === 'records' ? answer.records.filter((r) => /(^|;)\s*p\s*=/i.test(r)) : [];
  const fix = `Publish TXT ${host} with "${publish}".`;
  if (found.length === 0) return { name: 'dkim', status: 'fail', message: `No DKIM key at ${host}. ${fix}` };
  const keys = found.map((r) => (tagsOf(r).get('p') ?? '').replace(/\s+/g, ''));
  if (keys.includes(d.public_key)) return { name: 'dkim', status: 'pass', message: `The DKIM key at ${host} is this domain's key.` };
  const what = keys.every((k) => k === '') ? 'a revoked key (empty p=)' : 'another key';
  return { name: 'dkim', status: 'fail', message: `${host} holds ${what}, not this domain's. ${fix}` };
}

async function checkSpf(dns: Dns, d: CheckedDomain, config: Pick<Config, 'spfInclude'>, publish: string): Promise<CheckRun> {
  const answer = await dns.txt(d.domain);
  if (answer.kind === 'unanswered') return noAnswer('spf', d.domain);
  const found = answer.kind === 'records' ? answer.records.filter(isSpf) : [];
  const fail = (message: string): CheckRun => ({ name: 'spf', status: 'fail', message });
  if (found.length === 0) return fail(`No SPF record at ${d.domain}. Publish TXT ${d.domain} with "${publish}".`);
  if (found.length > 1)
    return fail(`${d.domain} has ${found.length} SPF records; receivers then fail SPF. Merge them into one, such as "${publish}".`);
  const record = found[0];
  const all = spfTerms(record).find((t) => t.name === 'all');
  if (all && (all.qualifier === '' || all.qualifier === '+'))
    return fail(
      `The SPF record ends with ${all.qualifier === '+' ? '"+all"' : 'a bare "all"'}, which lets anyone send as ${d.domain}. End it with "~all" or "-all".`,
    );
  const walk = await walkSpf(dns, d.domain, record);
  if (walk.kind === 'unanswered') return noAnswer('spf', walk.name);
  if (walk.kind === 'fail') return fail(walk.message);
  if (walk.lookups > SPF_LOOKUP_LIMIT)
    return fail(
      `The SPF record needs ${walk.lookups} DNS lookups through its includes; receivers stop at ${SPF_LOOKUP_LIMIT} and fail SPF. Remove includes you no longer use, or replace them with ip4:/ip6: terms.`,
    );
  const missing = (config.spfInclude ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .map((t) => t.replace(/^\+/, '').toLowerCase())
    .filter((t) => !walk.terms.has(t));
  if (missing.length > 0)
    return fail(
      `The SPF record ${quote(record)} lacks ${missing.join(' ')}: mail through this service fails SPF. Add it before the "all" term.`,
    );
  return { name: 'spf', status: 'pass', message: `One SPF record, ${walk.lookups} of ${SPF_LOOKUP_LIMIT} DNS lookups: ${quote(record)}.` };
}

const dmarcRecords = (a: Answer<string>) =>
  a.kind === 'records' ? a.records.filter((r) => /^v\s*=\s*DMARC1\s*(;|$)/i.test(r.trim())) : [];

async function checkDmarc(dns: Dns, d: CheckedDomain, publish: string): Promise<CheckRun> {
  const own = `_dmarc.${d.domain}`;
  const org = organisationalDomain(d.domain);
  let host = own;
  let answer = await dns.txt(own);
  if (answer.kind === 'unanswered') return noAnswer('dmarc', own);
  if (dmarcRecords(answer).length === 0 && org !== d.domain) {
    host = `_dmarc.${org}`;
    answer = await dns.txt(host);
    if (answer.kind === 'unanswered') return noAnswer('dmarc', host);
  }
  const found = dmarcRecords(answer);
  const fix = `Publish TXT ${own} with "${publish}".`;
  const fail = (message: string): CheckRun => ({ name: 'dmarc', status: 'fail', message });
  const where = host === own ? own : `${host} (the organisational domain's)`;
  if (found.length === 0) return fail(`No DMARC record at ${own}${org !== d.domain ? ` nor at _dmarc.${org}` : ''}. ${fix}`);
  if (found.length > 1) return fail(`${where} has ${found.length} DMARC records; receivers then ignore them all. Keep one.`);
  const tags = tagsOf(found[0]);
  const policy = ((host !== own && tags.get('sp')) || tags.get('p') || '').toLowerCase();
  if (!['none', 'quarantine', 'reject'].includes(policy))
    return fail(`The DMARC record at ${where} has ${policy ? `an invalid policy p=${policy}` : 'no policy (p=)'}. ${fix}`);
  const warnings: string[] = [];
  if (policy === 'none') warnings.push('its policy is p=none: receivers only monitor, they do not act on failing mail');
  if (!tags.get('rua')) warnings.push('it has no rua=, so no one receives the aggregate reports');
  if (warnings.length > 0)
    return { name: 'dmarc', status: 'warn', message: `The DMARC record at ${where} works, but ${warnings.join('; and ')}.` };
  return { name: 'dmarc', status: 'pass', message: `The DMARC record at ${where} has p=${policy} and sends reports.` };
}

function checkAlignment(d: CheckedDomain, config: Pick<Config, 'bounceAddress'>): CheckRun {
  if (!config.bounceAddress)
    return { name: 'alignment', status: 'pass', message: `Bounces return to the sender's own address at ${d.domain}: SPF aligns.` };
  const bounceDomain = config.bounceAddress.split('@').pop()!.toLowerCase();
  if (organisationalDomain(bounceDomain) === organisationalDomain(d.domain))
    return {
      name: 'alignment',
      status: 'pass',
      message: `The bounce address's domain ${bounceDomain} is in ${d.domain}'s organisational domain: SPF aligns.`,
    };
  return {
    name: 'alignment',
    status: 'warn',
    message: `Bounces return to ${bounceDomain}, outside ${organisationalDomain(d.domain)}: SPF does not align, so DMARC passes through DKIM alone. Use a bounce address under ${d.domain} for both.`,
  };
}

async function checkMx(dns: Dns, d: CheckedDomain): Promise<CheckRun> {
  const mx = await dns.mx(d.domain);
  if (mx.kind === 'unanswered') return noAnswer('mx', d.domain);
  if (mx.kind === 'records') {
    if (mx.records.some((r) => r.exchange === '' || r.exchange === '.'))
      return {
        name: 'mx',
        status: 'warn',
        message: `${d.domain} publishes a null MX: it accepts no mail, so replies and bounces to it are lost.`,
      };
    return { name: 'mx', status: 'pass', message: `${d.domain} accepts mail at ${mx.records.map((r) => r.exchange).join(', ')}.` };
  }
  const a = await dns.address(d.domain);
  if (a.kind === 'unanswered') return noAnswer('mx', d.domain);
  if (a.kind === 'records')
    return { name: 'mx', status: 'pass', message: `${d.domain} has no MX record but an address record, where it accepts mail.` };
  return {
    name: 'mx',
    status: 'warn',
    message: `${d.domain} has no MX or address record: replies to its senders are lost. Publish an MX record.`,
  };
}

/** Bounds a check by the run's deadline: past it, the check did not get its answers. */
function bounded(name: CheckName, asked: string, check: Promise<CheckRun>, deadline: Promise<void>): Promise<CheckRun> {
  return Promise.race([check, deadline.then(() => noAnswer(name, asked))]);
}

/** Runs every check of a domain at once, within `CHECK_DEADLINE_MS`. */
export async function runChecks(
  dns: Dns,
  config: Pick<Config, 'spfInclude' | 'dmarcRua' | 'bounceAddress'>,
  d: CheckedDomain,
): Promise<CheckRun[]> {
  const [dkim, spf, dmarc] = recordsFor(config, d).map((r) => r.value);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, CHECK_DEADLINE_MS)));
  try {
    return await Promise.all([
      bounded('dkim', `${d.dkim_selector}._domainkey.${d.domain}`, checkDkim(dns, d, dkim), deadline),
      bounded('spf', d.domain, checkSpf(dns, d, config, spf), deadline),
      bounded('dmarc', `_dmarc.${d.domain}`, checkDmarc(dns, d, dmarc), deadline),
      Promise.resolve(checkAlignment(d, config)),
      bounded('mx', d.domain, checkMx(dns, d), deadline),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The domain's status after a run: `failed` when DKIM, SPF or DMARC fails; else, when DNS did not
 * answer one of them, the status it had; else `verified`.
 */
export function statusAfter(checks: readonly CheckRun[], previous: string): string {
  const core = checks.filter((c) => c.name === 'dkim' || c.name === 'spf' || c.name === 'dmarc');
  if (core.some((c) => c.status === 'fail')) return 'failed';
  if (core.some((c) => c.unanswered)) return previous;
  return 'verified';
}
