import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, resolve } from 'node:path';

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
  /** Requests per minute per account; 0 turns rate limiting off. */
  readonly rateLimitPerMinute: number;
  readonly maxCsvBytes: number;
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
}

type Env = Record<string, string | undefined>;

function intFrom(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got "${raw}"`);
  return n;
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

/** Builds the frozen configuration from an environment (process.env by default). */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const dataDir = resolve(env.DATA_DIR ?? './data');
  const dkim =
    env.DKIM_DOMAIN && env.DKIM_SELECTOR && env.DKIM_PRIVATE_KEY
      ? { domain: env.DKIM_DOMAIN, selector: env.DKIM_SELECTOR, privateKey: env.DKIM_PRIVATE_KEY.replace(/\\n/g, '\n') }
      : null;
  const port = intFrom(env, 'PORT', 3000);
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
    rateLimitPerMinute: intFrom(env, 'RATE_LIMIT_PER_MINUTE', 600),
    maxCsvBytes: intFrom(env, 'MAX_CSV_MB', 50) * 1024 * 1024,
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
    ...overrides,
  };
  return Object.freeze(config);
}
