import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ipaddr from 'ipaddr.js';
import { isEmail } from './util/email.js';

/** The service configuration, parsed once from the environment (variables listed in the README). */
export interface Config {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string;
  readonly publicUrl: string;
  readonly smtpUrl: string | null;
  readonly outboxDir: string;
  readonly dataDir: string;
  readonly appSecret: string;
  readonly dkim: { readonly domain: string; readonly selector: string; readonly privateKey: string } | null;
  /**
   * Which proxies may name the client in `X-Forwarded-For` (Fastify's `trustProxy`): false, none
   * (the socket's address is the client); a number, that many proxy hops; else their addresses.
   */
  readonly trustProxy: false | number | string[];
  /** Requests per minute per account; 0 turns rate limiting off. */
  readonly rateLimitPerMinute: number;
  readonly maxCsvBytes: number;
  /** The largest image the media library takes (`MAX_MEDIA_MB`, 5). */
  readonly maxMediaBytes: number;
  /** What each account's media library may hold in all (`MEDIA_QUOTA_MB`, 500). */
  readonly mediaQuotaBytes: number;
  /** The in-process cache of served images (`MEDIA_CACHE_MB`, 32; 0: none). */
  readonly mediaCacheBytes: number;
  readonly logLevel: string;
  /** When set, `GET /metrics` requires `Authorization: Bearer <token>`; open otherwise. */
  readonly metricsToken: string | null;
  /** VERP: every message's envelope sender is `<local>+<token>@<domain>` of this address; null: the sender's own address. */
  readonly bounceAddress: string | null;
  /** The secret path part of `POST /inbound/email/<token>`; null: the route answers 404. */
  readonly inboundToken: string | null;
  /** Port of the inbound SMTP listener for bounces and complaints; null: no listener. */
  readonly inboundSmtpPort: number | null;
  /** SendGrid's Event Webhook verification key (base64 ECDSA public key); null: `/inbound/sendgrid` answers 404. */
  readonly sendgridWebhookPublicKey: string | null;
  /** Mailgun's webhook signing key; null: `/inbound/mailgun` answers 404. */
  readonly mailgunWebhookSigningKey: string | null;
  /** `user:password` of Postmark's webhook basic auth; null: `/inbound/postmark` answers 404. */
  readonly postmarkWebhookAuth: string | null;
  /** PEM file of the SNS signing certificate to trust instead of fetching `SigningCertURL`; null: fetched. */
  readonly snsCertFile: string | null;
  /** `/inbound/ses` is open when set (any value but `0`); SNS signatures are always checked. */
  readonly sesWebhook: boolean;
  /**
   * A file of address ranges whose opens are machines' (one CIDR a line, or Apple's egress CSV);
   * null: none (docs/engagement.md).
   */
  readonly machineIpRangesFile: string | null;
  /** Outgoing webhooks may go to loopback, private and link-local addresses (a closed network, tests). */
  readonly webhooksAllowPrivate: boolean;
  /** At the very first start: the address of the first account's owner, who gets a printed link to set a password; null: none. */
  readonly ownerEmail: string | null;
  /** DNS servers the sending-domain checks ask (`host:port`, `DNS_SERVERS` comma-separated); empty: the system's. */
  readonly dnsServers: readonly string[];
  /** Terms every sending domain's SPF record must hold (`SPF_INCLUDE`, e.g. `include:_spf.relay.example`); null: only the form is checked. */
  readonly spfInclude: string | null;
  /** Where DMARC aggregate reports go (`DMARC_RUA`); null: `postmaster@<domain>`. */
  readonly dmarcRua: string | null;
  /** The built console served at /app (`npm run build` writes it); not from the environment, tests point it elsewhere. */
  readonly consoleDir: string;
}

type Env = Record<string, string | undefined>;

/** One SMTP relay of `SMTP_URL`, its own options taken out of the URL. */
export interface RelaySpec {
  /** `host:port` (a `#2`, `#3`… suffix when two relays share one): in logs, metrics and `mail_messages.relay`. */
  readonly name: string;
  /** The URL handed to nodemailer, without `rate` and `pool`. */
  readonly url: string;
  /** Most messages per second through this relay, shared by every worker; null: unlimited. */
  readonly rate: number | null;
  /** Most open connections to it; null: the transport's default. */
  readonly pool: number | null;
}

/**
 * The relays of `SMTP_URL`: comma-separated URLs, each with optional `rate` (messages per second,
 * a positive decimal) and `pool` (a positive integer) query options, which are removed from the URL
 * nodemailer sees. Throws an error naming the relay (by position and host, never its password) and
 * the bad value.
 */
export function parseSmtpRelays(smtpUrl: string): RelaySpec[] {
  const parts = smtpUrl
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (parts.length === 0) throw new Error('SMTP_URL names no relay');
  const seen = new Map<string, number>();
  return parts.map((part, i) => {
    let url: URL;
    try {
      url = new URL(part);
    } catch {
      throw new Error(`SMTP_URL: relay ${i + 1} is not a URL (expected smtp://host:port or smtps://host:port)`);
    }
    if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
      throw new Error(`SMTP_URL: relay ${i + 1} (${url.host}) must start with smtp:// or smtps://, not ${url.protocol}//`);
    }
    const where = `SMTP_URL: relay ${i + 1} (${url.host})`;
    const rawRate = url.searchParams.get('rate');
    const rawPool = url.searchParams.get('pool');
    let rate: number | null = null;
    if (rawRate !== null) {
      rate = /^\d*\.?\d+$/.test(rawRate.trim()) ? Number(rawRate) : NaN;
      if (!(rate > 0) || !Number.isFinite(rate))
        throw new Error(`${where}: rate must be a positive number of messages per second, got "${rawRate}"`);
    }
    let pool: number | null = null;
    if (rawPool !== null) {
      pool = /^\d+$/.test(rawPool.trim()) ? Number(rawPool) : NaN;
      if (!(pool >= 1) || pool > 1000)
        throw new Error(`${where}: pool must be a whole number of connections from 1 to 1000, got "${rawPool}"`);
    }
    url.searchParams.delete('rate');
    url.searchParams.delete('pool');
    const hostPort = `${url.hostname}:${url.port || (url.protocol === 'smtps:' ? '465' : '587')}`;
    const n = (seen.get(hostPort) ?? 0) + 1;
    seen.set(hostPort, n);
    return { name: n === 1 ? hostPort : `${hostPort}#${n}`, url: url.toString(), rate, pool };
  });
}

function intFrom(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got "${raw}"`);
  return n;
}

/** The names proxy-addr (under Fastify's `trustProxy`) takes for whole ranges. */
const PROXY_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** Whether `s` is an IPv4 (dotted quad) or IPv6 address, optionally with a `/prefix`. */
function isAddressOrCidr(s: string): boolean {
  const [address, prefix, extra] = s.split('/');
  const v4 = ipaddr.IPv4.isValidFourPartDecimal(address);
  if (!v4 && !(address.includes(':') && ipaddr.IPv6.isValid(address))) return false;
  if (prefix === undefined) return true;
  return extra === undefined && /^\d{1,3}$/.test(prefix) && Number(prefix) <= (v4 ? 32 : 128);
}

/**
 * TRUST_PROXY: unset, empty, `0` or `false`: no proxy is trusted and `X-Forwarded-For` is ignored,
 * since any client can write it; a whole number: that many proxy hops in front of the service; else
 * a comma-separated list of the proxies' addresses or CIDR ranges (`loopback`, `linklocal` and
 * `uniquelocal` name those ranges). Throws a startup error naming the value it cannot take.
 */
export function parseTrustProxy(raw: string | undefined): false | number | string[] {
  const value = (raw ?? '').trim();
  if (value === '' || value === '0' || value.toLowerCase() === 'false') return false;
  if (/^\d+$/.test(value)) return Number(value);
  const list = value.split(',').map((s) => s.trim());
  const bad = list.find((s) => !PROXY_RANGES.has(s) && !isAddressOrCidr(s));
  if (bad !== undefined) {
    throw new Error(
      `TRUST_PROXY must be 0 (trust no proxy), a number of proxy hops, or a comma-separated list of proxy addresses or ` +
        `CIDR ranges; "${bad}" is none of these` +
        (bad.toLowerCase() === 'true' ? ' (trusting every client would let any client choose its own address)' : ''),
    );
  }
  return list;
}

/**
 * Fastify's `trustProxy` option for the configured value. A hop count becomes a function of the
 * hop's position (0: the socket's peer), since Fastify 5 trusts no proxy when given a bare number.
 */
export function trustProxyOption(trust: Config['trustProxy']): false | string[] | ((address: string, hop: number) => boolean) {
  return typeof trust === 'number' ? (_address, hop) => hop < trust : trust;
}

/** Reads APP_SECRET, or the one kept in the data folder, creating it on first use. */
function appSecretFrom(env: Env, dataDir: string): string {
  if (env.APP_SECRET) return env.APP_SECRET;
  const file = resolve(dataDir, 'app-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dirname(file), { recursive: true });
  const secret = randomBytes(32).toString('hex');
  writeFileSync(file, secret + '\n', { mode: 0o600 });
  return secret;
}

/** OWNER_EMAIL: an email address, or unset; anything else stops the start with its reason. */
function ownerEmailFrom(raw: string | undefined): string | null {
  const value = raw?.trim() ?? '';
  if (value === '') return null;
  if (!isEmail(value)) throw new Error(`OWNER_EMAIL must be an email address, got "${value}"`);
  return value;
}

/** DNS_SERVERS: comma-separated IP addresses, each with an optional port (`1.2.3.4:53`, `[::1]:53`); anything else stops the start. */
function dnsServersFrom(raw: string | undefined): string[] {
  const list = (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const server of list) {
    const m = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(server) ?? /^([^:]+)(?::(\d{1,5}))?$/.exec(server) ?? [server, server];
    const host = m[1];
    if (!ipaddr.isValid(host)) throw new Error(`DNS_SERVERS: "${server}" is not an IP address with an optional port`);
    if (m[2] !== undefined && (Number(m[2]) < 1 || Number(m[2]) > 65535)) throw new Error(`DNS_SERVERS: "${server}" has no valid port`);
  }
  return list;
}

/** DMARC_RUA: an email address (a `mailto:` prefix is taken off), or unset. */
function dmarcRuaFrom(raw: string | undefined): string | null {
  const value = (raw ?? '').trim().replace(/^mailto:/i, '');
  if (value === '') return null;
  if (!isEmail(value)) throw new Error(`DMARC_RUA must be an email address, got "${value}"`);
  return value;
}

/** Builds the frozen configuration from an environment (process.env by default). */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const dataDir = resolve(env.DATA_DIR ?? './data');
  const dkim =
    env.DKIM_DOMAIN && env.DKIM_SELECTOR && env.DKIM_PRIVATE_KEY
      ? { domain: env.DKIM_DOMAIN, selector: env.DKIM_SELECTOR, privateKey: env.DKIM_PRIVATE_KEY.replace(/\\n/g, '\n') }
      : null;
  const port = intFrom(env, 'PORT', 3000);
  // A bad relay option stops the start with its reason, rather than the first send failing.
  if (env.SMTP_URL) parseSmtpRelays(env.SMTP_URL);
  const config: Config = {
    port,
    host: env.HOST ?? '127.0.0.1',
    databaseUrl: env.DATABASE_URL || `sqlite:${resolve(dataDir, 'campaign.db')}`,
    publicUrl: (env.PUBLIC_URL ?? `http://localhost:${port}`).replace(/\/+$/, ''),
    smtpUrl: env.SMTP_URL || null,
    outboxDir: resolve(dataDir, 'outbox'),
    dataDir,
    appSecret: overrides.appSecret ?? appSecretFrom(env, dataDir),
    dkim,
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    rateLimitPerMinute: intFrom(env, 'RATE_LIMIT_PER_MINUTE', 600),
    maxCsvBytes: intFrom(env, 'MAX_CSV_MB', 50) * 1024 * 1024,
    maxMediaBytes: Math.floor(intFrom(env, 'MAX_MEDIA_MB', 5) * 1024 * 1024),
    mediaQuotaBytes: Math.floor(intFrom(env, 'MEDIA_QUOTA_MB', 500) * 1024 * 1024),
    mediaCacheBytes: Math.floor(intFrom(env, 'MEDIA_CACHE_MB', 32) * 1024 * 1024),
    logLevel: env.LOG_LEVEL ?? 'info',
    metricsToken: env.METRICS_TOKEN || null,
    bounceAddress: env.BOUNCE_ADDRESS || null,
    inboundToken: env.INBOUND_TOKEN || null,
    inboundSmtpPort: env.INBOUND_SMTP_PORT ? intFrom(env, 'INBOUND_SMTP_PORT', 0) : null,
    sendgridWebhookPublicKey: env.SENDGRID_WEBHOOK_PUBLIC_KEY || null,
    mailgunWebhookSigningKey: env.MAILGUN_WEBHOOK_SIGNING_KEY || null,
    postmarkWebhookAuth: env.POSTMARK_WEBHOOK_AUTH || null,
    snsCertFile: env.SNS_CERT_FILE || null,
    sesWebhook: Boolean(env.SES_WEBHOOK) && env.SES_WEBHOOK !== '0',
    machineIpRangesFile: env.MACHINE_IP_RANGES_FILE || null,
    webhooksAllowPrivate: Boolean(env.WEBHOOKS_ALLOW_PRIVATE) && env.WEBHOOKS_ALLOW_PRIVATE !== '0',
    ownerEmail: ownerEmailFrom(env.OWNER_EMAIL),
    dnsServers: dnsServersFrom(env.DNS_SERVERS),
    spfInclude: env.SPF_INCLUDE?.trim().replace(/\s+/g, ' ') || null,
    dmarcRua: dmarcRuaFrom(env.DMARC_RUA),
    // dist/console of the package, from src/ (tests, tsx) and from dist/ (npm start) alike.
    consoleDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    ...overrides,
  };
  return Object.freeze(config);
}
