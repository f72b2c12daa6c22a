/**
 * The differential reading of the bounce corpus (test/inbound/corpus/sisimai): each mail read by
 * Sisimai, the reference bounce classifier (through sisimai-oracle.pl, one Perl process for the
 * whole corpus), and by the service's own parser (`parseInboundMail`, what the inbound route and
 * the SMTP listener use), then compared on the recipient and the class (hard, soft, complaint).
 * Used by sisimai-differential.test.ts; `node --import tsx test/inbound/sisimai-compare.ts`
 * prints the same figures and disagreements without the test runner.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseInboundMail } from '../../src/inbound/parse.js';

export const CORPUS = join(import.meta.dirname, 'corpus/sisimai');
const ORACLE = join(import.meta.dirname, 'sisimai-oracle.pl');

/** A class as both readers can say it: a bounce's type, a complaint, or (the service only) nothing recognised. */
export type Reading = 'hard' | 'soft' | 'complaint' | 'ignored';

/** What Sisimai says of one file (its first result), as the oracle prints it. */
export interface OracleLine {
  file: string;
  count: number;
  recipient?: string;
  reason?: string;
  status?: string;
  replycode?: string;
  feedbacktype?: string;
  agent?: string;
  command?: string;
  diagnostic?: string;
  error?: string;
}

/** One file compared. */
export interface Comparison {
  file: string;
  sisimai: { recipient: string; reading: Reading; reason: string; agent: string; command: string };
  service: { recipient: string | null; reading: Reading; reason: string | null };
  sameRecipient: boolean;
  sameClass: boolean;
}

/** The agreement over the corpus. */
export interface Agreement {
  files: number;
  /** Files Sisimai finds no bounce or complaint in: left out of the figures. */
  unparsed: string[];
  compared: Comparison[];
  recipientRate: number;
  classRate: number;
}

/** Whether Perl can load Sisimai here. */
export function sisimaiInstalled(): boolean {
  return spawnSync('perl', ['-MSisimai', '-e', '1'], { stdio: 'ignore' }).status === 0;
}

/** The corpus files, sorted. */
export function corpusFiles(): string[] {
  return readdirSync(CORPUS)
    .filter((f) => f.endsWith('.eml'))
    .sort()
    .map((f) => join(CORPUS, f));
}

/** Sisimai's reading of every file, in one Perl process, keyed by path. */
export function readWithSisimai(files: readonly string[]): Map<string, OracleLine> {
  const out = execFileSync('perl', [ORACLE, ...files], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const lines = out
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as OracleLine);
  return new Map(lines.map((l) => [l.file, l]));
}

/** Reasons Sisimai gives when the address or its domain does not exist or has moved. */
const SISIMAI_HARD = new Set(['userunknown', 'hostunknown', 'hasmoved']);

/**
 * Sisimai's reading as a class: hard for a reason that says the address or domain does not exist
 * or has moved, and for `notaccept` (a null MX, a host that accepts no mail) with a permanent
 * (5xx) reply or status; a complaint for `feedback`; soft for everything else.
 */
export function sisimaiReading(line: OracleLine): Reading {
  const reason = line.reason ?? '';
  if (reason === 'feedback') return 'complaint';
  if (SISIMAI_HARD.has(reason)) return 'hard';
  const permanent = /^5/.test(line.replycode ?? '') || /^5/.test(line.status ?? '');
  return reason === 'notaccept' && permanent ? 'hard' : 'soft';
}

/**
 * The service's reading of one raw mail, for the recipient Sisimai names: the recipient of the
 * report with that address when the report names several, else its first.
 */
export async function serviceReading(
  raw: Buffer,
  recipient: string,
): Promise<{ recipient: string | null; reading: Reading; reason: string | null }> {
  const report = await parseInboundMail(raw);
  const same = report.recipients.find((r) => r.email?.toLowerCase() === recipient);
  const r = same ?? report.recipients[0];
  const reading: Reading = report.kind === 'bounce' ? (r?.type ?? 'soft') : report.kind;
  return { recipient: r?.email?.toLowerCase() ?? null, reading, reason: r?.reason ?? null };
}

/** Both readings of every file, compared. */
export async function compareCorpus(files: readonly string[] = corpusFiles()): Promise<Agreement> {
  const oracle = readWithSisimai(files);
  const unparsed: string[] = [];
  const compared: Comparison[] = [];
  for (const file of files) {
    const line = oracle.get(file);
    const name = relative(CORPUS, file);
    if (!line || line.count === 0 || !line.recipient) {
      unparsed.push(name);
      continue;
    }
    const recipient = line.recipient.toLowerCase();
    const sisimai = {
      recipient,
      reading: sisimaiReading(line),
      reason: line.reason ?? '',
      agent: line.agent ?? '',
      command: line.command ?? '',
    };
    const service = await serviceReading(readFileSync(file), recipient);
    compared.push({
      file: name,
      sisimai,
      service,
      sameRecipient: service.recipient === recipient,
      sameClass: service.reading === sisimai.reading,
    });
  }
  const rate = (n: number) => (compared.length === 0 ? 0 : n / compared.length);
  return {
    files: files.length,
    unparsed,
    compared,
    recipientRate: rate(compared.filter((c) => c.sameRecipient).length),
    classRate: rate(compared.filter((c) => c.sameClass).length),
  };
}

/** The figures and the disagreements, as lines to print. */
export function describeAgreement(a: Agreement): string[] {
  const pct = (r: number) => `${(r * 100).toFixed(1)}%`;
  const n = a.compared.length;
  const lines = [
    `corpus: ${a.files} files; Sisimai reads ${n}, finds no bounce in ${a.unparsed.length}: ${a.unparsed.join(', ') || '-'}`,
    `recipient: ${pct(a.recipientRate)} (${a.compared.filter((c) => c.sameRecipient).length}/${n})`,
    `class: ${pct(a.classRate)} (${a.compared.filter((c) => c.sameClass).length}/${n})`,
  ];
  for (const c of a.compared.filter((x) => !x.sameRecipient || !x.sameClass)) {
    const what = [
      c.sameRecipient ? null : `recipient ${c.service.recipient ?? '-'} ≠ ${c.sisimai.recipient}`,
      c.sameClass
        ? null
        : `class ${c.service.reading} ≠ ${c.sisimai.reading} (${[c.sisimai.reason, c.sisimai.agent, c.sisimai.command].filter(Boolean).join(', ')})`,
    ].filter(Boolean);
    lines.push(`  ${c.file}: ${what.join('; ')} | service: ${(c.service.reason ?? '').slice(0, 120)}`);
  }
  return lines;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(describeAgreement(await compareCorpus()).join('\n'));
}
