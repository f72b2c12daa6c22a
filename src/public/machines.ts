/**
 * Who made an open or a click: a person, or a machine (a mail provider's proxy that fetches every
 * image on delivery, a security gateway or a link previewer that fetches every link). The agent
 * lists and the address ranges are data; docs/engagement.md gives the source of each entry.
 * Matching is by case-insensitive substring over at most the first `AGENT_CHARS` characters of
 * the User-Agent, so its cost is linear in the header whatever it holds.
 */
import { readFileSync } from 'node:fs';
import ipaddr from 'ipaddr.js';

/** How much of a User-Agent is read; real agents are far shorter. */
const AGENT_CHARS = 1024;

/** Apple Mail Privacy Protection's proxy sends exactly this, and nothing else, as its agent. */
export const APPLE_PROXY_AGENT = 'Mozilla/5.0';

/**
 * Image proxies that fetch a message's images when a person opens it (never on delivery): their
 * opens are people's, whatever else the agent or address says.
 */
export const PERSON_PROXY_AGENTS: readonly string[] = ['GoogleImageProxy', 'YahooMailProxy'];

/**
 * Agents that fetch a message's images or links without a person: security gateways and link
 * scanners, link previewers, crawlers (Mautic's `do_not_track_bots` list) and HTTP libraries.
 * An open or a click by one of them is a machine's.
 */
export const MACHINE_AGENTS: readonly string[] = [
  // Security gateways and link scanners.
  'BingPreview',
  'Barracuda',
  'Mimecast',
  'Proofpoint',
  'Symantec',
  'Forcepoint',
  'Trend Micro',
  'TrendMicro',
  'FireEye',
  'Sophos',
  'ZScaler',
  'Cisco',
  'Cloudmark',
  'SafeLinks',
  'HeadlessChrome',
  'PhantomJS',
  // Link previewers.
  'facebookexternalhit',
  'Facebot',
  'Twitterbot',
  'LinkedInBot',
  'Slackbot',
  'Discordbot',
  'TelegramBot',
  'WhatsApp/',
  'SkypeUriPreview',
  // Crawlers (from Mautic's list of agents not to track).
  'Googlebot',
  'Google Web Preview',
  'Mediapartners-Google',
  'bingbot',
  'msnbot',
  'Baiduspider',
  'YandexBot',
  'Slurp',
  'YahooSeeker',
  'Exabot',
  'AhrefsBot',
  'MJ12bot',
  'SeznamBot',
  'rogerbot',
  'XoviBot',
  // HTTP libraries and command-line clients: no mail client or browser sends these.
  'curl/',
  'Wget',
  'python-requests',
  'python-urllib',
  'aiohttp',
  'Go-http-client',
  'Java/',
  'okhttp',
  'Apache-HttpClient',
  'libwww-perl',
  'node-fetch',
  'axios/',
  'undici',
];

const lower = (list: readonly string[]) => list.map((s) => s.toLowerCase());
const PERSON_PROXIES = lower(PERSON_PROXY_AGENTS);
const MACHINES = lower(MACHINE_AGENTS);

/** The agent as matched: trimmed, lower case, bounded; '' when missing. */
function agentOf(userAgent: string | string[] | undefined): string {
  const raw = Array.isArray(userAgent) ? (userAgent[0] ?? '') : (userAgent ?? '');
  return raw.slice(0, AGENT_CHARS).trim().toLowerCase();
}

/** Whether `agent` (as `agentOf` gives it) names one of `list`. */
const names = (agent: string, list: readonly string[]) => list.some((token) => agent.includes(token));

/** Decides whether a pixel request or a click came from a machine, from its User-Agent and client address. */
export interface MachineRules {
  /**
   * An open is a machine's when its agent is missing, empty, exactly Apple's proxy agent, or on
   * `MACHINE_AGENTS`, or when its address is in the configured ranges; an image proxy that
   * fetches on a person's open (`PERSON_PROXY_AGENTS`) is a person's.
   */
  isMachineOpen(userAgent: string | string[] | undefined, address: string): boolean;
  /** A click is a scanner's (by its agent alone) when its agent is missing, empty or on `MACHINE_AGENTS`. */
  isScannerAgent(userAgent: string | string[] | undefined): boolean;
}

/** The rules, with the address ranges of `ranges` (none: no address is a machine's). */
export function machineRules(ranges: AddressRanges = NO_RANGES): MachineRules {
  return {
    isMachineOpen(userAgent, address) {
      const agent = agentOf(userAgent);
      if (agent === '' || agent === APPLE_PROXY_AGENT.toLowerCase()) return true;
      if (names(agent, PERSON_PROXIES)) return false;
      return names(agent, MACHINES) || ranges.has(address);
    },
    isScannerAgent(userAgent) {
      const agent = agentOf(userAgent);
      return agent === '' || names(agent, MACHINES);
    },
  };
}

/** A set of address ranges, looked up in logarithmic time whatever its size. */
export interface AddressRanges {
  /** Whether `address` (IPv4, IPv6 or IPv4-mapped IPv6) is in one of the ranges; false for anything else. */
  has(address: string): boolean;
  /** How many ranges were read (before merging). */
  readonly size: number;
}

/** No ranges at all. */
export const NO_RANGES: AddressRanges = { has: () => false, size: 0 };

/** An address as a number: 32 bits for IPv4, 128 for IPv6. */
function valueOf(bytes: number[]): bigint {
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  return v;
}

/** Sorted, merged `[start, end]` pairs: `starts[i]..ends[i]`, ascending and disjoint. */
interface Intervals {
  starts: bigint[];
  ends: bigint[];
}

function merged(pairs: Array<[bigint, bigint]>): Intervals {
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const starts: bigint[] = [];
  const ends: bigint[] = [];
  for (const [s, e] of pairs) {
    const last = ends.length - 1;
    if (last >= 0 && s <= ends[last] + 1n) {
      if (e > ends[last]) ends[last] = e;
    } else {
      starts.push(s);
      ends.push(e);
    }
  }
  return { starts, ends };
}

/** Whether `v` is in one of the intervals (binary search on the starts). */
function within(iv: Intervals, v: bigint): boolean {
  let lo = 0;
  let hi = iv.starts.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (iv.starts[mid] <= v) lo = mid + 1;
    else hi = mid - 1;
  }
  return hi >= 0 && v <= iv.ends[hi];
}

/**
 * The ranges of a text: one CIDR (or one address) per line, or a CSV whose first column is one
 * (Apple's published egress list: `cidr,country,region,city,`). Blank lines and lines starting
 * with `#` are skipped. Parsing and validation are ipaddr.js's; a line it refuses throws an error
 * naming `source` and the line. Each range is kept as a start and end, merged and sorted once.
 */
export function parseAddressRanges(text: string, source = 'the ranges'): AddressRanges {
  const v4: Array<[bigint, bigint]> = [];
  const v6: Array<[bigint, bigint]> = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const field = lines[i].split(',')[0].trim();
    if (field === '' || field.startsWith('#')) continue;
    let address: ipaddr.IPv4 | ipaddr.IPv6;
    let prefix: number;
    try {
      if (field.includes('/')) [address, prefix] = ipaddr.parseCIDR(field);
      else {
        address = ipaddr.parse(field);
        prefix = address.kind() === 'ipv4' ? 32 : 128;
      }
    } catch {
      throw new Error(`${source}, line ${i + 1}: "${field.slice(0, 60)}" is not an IP address range (CIDR)`);
    }
    const bits = address.kind() === 'ipv4' ? 32 : 128;
    const host = BigInt(bits - prefix);
    const start = (valueOf(address.toByteArray()) >> host) << host;
    const end = start + (1n << host) - 1n;
    (bits === 32 ? v4 : v6).push([start, end]);
  }
  const size = v4.length + v6.length;
  const four = merged(v4);
  const six = merged(v6);
  return {
    size,
    has(address) {
      if (size === 0 || !ipaddr.isValid(address)) return false;
      const parsed = ipaddr.process(address);
      const value = valueOf(parsed.toByteArray());
      return within(parsed.kind() === 'ipv4' ? four : six, value);
    },
  };
}

/** The ranges of MACHINE_IP_RANGES_FILE (`parseAddressRanges`), read once at start; none when unset. */
export function loadAddressRanges(file: string | null): AddressRanges {
  if (!file) return NO_RANGES;
  return parseAddressRanges(readFileSync(file, 'utf8'), `MACHINE_IP_RANGES_FILE (${file})`);
}
