import type { Dns } from './sending-domains.dns.js';

/** The SPF terms that make a DNS query (RFC 7208 §4.6.4); more than 10 in all is a permanent error. */
const QUERYING = new Set(['include', 'a', 'mx', 'ptr', 'exists', 'redirect']);
export const SPF_LOOKUP_LIMIT = 10;
/** Included records read at most, so a huge tree or a chain of redirects ends; far past the limit. */
const MAX_RECORDS = 40;

/** One term of an SPF record: its qualifier, mechanism or modifier name (lower case), and argument. */
interface Term {
  qualifier: string;
  name: string;
  arg: string;
  /** The term as compared with `SPF_INCLUDE`'s: lower case, without a `+` qualifier. */
  key: string;
}

/** Whether a TXT record is an SPF record. */
export const isSpf = (txt: string) => /^v=spf1(\s|$)/i.test(txt.trim());

/** The terms of an SPF record after `v=spf1` (linear: one split on white space). */
export function spfTerms(record: string): Term[] {
  return record
    .trim()
    .split(/\s+/)
    .slice(1)
    .filter(Boolean)
    .map((raw) => {
      const qualifier = /^[+?~-]/.test(raw) ? raw[0] : '';
      const body = qualifier ? raw.slice(1) : raw;
      const m = /^([A-Za-z][A-Za-z0-9_.-]*)(?:([:=/])(.*))?$/.exec(body);
      const name = (m?.[1] ?? body).toLowerCase();
      const arg = m?.[2] === '/' ? `/${m[3]}` : (m?.[3] ?? '');
      return { qualifier, name, arg, key: (qualifier === '+' ? body : raw).toLowerCase() };
    });
}

/** What following an SPF record through its includes found. */
export type SpfWalk =
  { kind: 'done'; lookups: number; terms: Set<string> } | { kind: 'fail'; message: string } | { kind: 'unanswered'; name: string };

/**
 * Follows `record` (the domain's SPF record) through its `include` and `redirect` terms, counting
 * the terms that query DNS, and collects every term seen (for `SPF_INCLUDE`'s). A loop, an include
 * without exactly one SPF record, or DNS that does not answer ends the walk.
 */
export async function walkSpf(dns: Dns, domain: string, record: string): Promise<SpfWalk> {
  let lookups = 0;
  let records = 0;
  const terms = new Set<string>();
  const visit = async (text: string, path: string[]): Promise<SpfWalk | null> => {
    for (const term of spfTerms(text)) {
      terms.add(term.key);
      if (!QUERYING.has(term.name)) continue;
      lookups++;
      if ((term.name !== 'include' && term.name !== 'redirect') || term.arg === '' || term.arg.includes('%')) continue;
      const target = term.arg.toLowerCase().replace(/\.$/, '');
      if (path.includes(target)) return { kind: 'fail', message: `The SPF includes loop: ${[...path, target].join(' → ')}.` };
      if (++records > MAX_RECORDS) return null;
      const answer = await dns.txt(target);
      if (answer.kind === 'unanswered') return { kind: 'unanswered', name: target };
      const found = answer.kind === 'records' ? answer.records.filter(isSpf) : [];
      if (found.length !== 1)
        return {
          kind: 'fail',
          message: `${term.name}:${target} ${found.length === 0 ? 'has no SPF record' : `has ${found.length} SPF records`}, so the SPF check of every mail fails (permerror).`,
        };
      const deeper = await visit(found[0], [...path, target]);
      if (deeper) return deeper;
    }
    return null;
  };
  const ended = await visit(record, [domain]);
  return ended ?? { kind: 'done', lookups, terms };
}
