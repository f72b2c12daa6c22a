import { randomBytes } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import { parseSmtpRelays, type Config, type RelaySpec } from '../config.js';
import { TransportError, type MailMessage, type Relay, type SendResult, type Transport } from './transport.js';
import { bareMessageId } from '../util/email.js';

/** The part of the configuration a transport needs. */
export type TransportConfig = Pick<Config, 'smtpUrl' | 'outboxDir' | 'dkim'>;

/** Nodemailer's error fields we read (every one optional). */
interface MailerError extends Error {
  code?: string;
  responseCode?: number;
  permanent?: boolean;
  response?: string;
  /** The system error under nodemailer's own code (ECONNREFUSED under ESOCKET). */
  originalCode?: string;
  /** Which of nodemailer's timeouts fired. */
  timeoutType?: string;
}

/** System errors that say the relay could not be reached at all: nothing was sent. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Whether a failure is the relay's, not the message's (see `TransportError.relayBusy`): a
 * throttling answer (421, 454, or a 4xx with an enhanced status 4.7.x), or a relay that cannot be
 * reached (refused connection, unknown host, connect or greeting timeout). A connection dropped
 * mid-transaction is neither: the relay may have taken the message, so it waits its backoff.
 */
function relayBusy(e: MailerError, code: number | undefined): 'throttled' | 'down' | null {
  if (code === 421 || code === 454) return 'throttled';
  if (code !== undefined && code >= 400 && code < 500 && /(^|[\s-])4\.7\.\d{1,3}\b/.test(e.response ?? '')) return 'throttled';
  if (code === undefined && UNREACHABLE.has(e.originalCode ?? e.code ?? '')) return 'down';
  if (e.timeoutType === 'CONNECT_TIMEOUT' || e.timeoutType === 'GREETING_TIMEOUT') return 'down';
  return null;
}

/**
 * A nodemailer failure as a TransportError: the server refusing the message or recipient for
 * good (5xx except 503) is permanent, a bounce; 4xx replies, dropped connections, timeouts and
 * refused logins are temporary, so delivery retries them (a refused login is a configuration
 * problem of ours, not a property of the recipient).
 */
export function toTransportError(err: unknown): TransportError {
  if (err instanceof TransportError) return err;
  const e = (err ?? {}) as MailerError;
  const code = typeof e.responseCode === 'number' ? e.responseCode : undefined;
  const refusedByServer = code !== undefined && code >= 500 && code !== 503 && e.code !== 'EAUTH';
  const permanent = refusedByServer && e.permanent !== false;
  return new TransportError(e.response || e.message || String(err), permanent, code, permanent ? null : relayBusy(e, code));
}

/** Our message → nodemailer's options. */
function mailOptions(message: MailMessage): SendMailOptions {
  return {
    from: message.from,
    to: message.to,
    replyTo: message.replyTo,
    subject: message.subject,
    html: message.html,
    text: message.text,
    headers: message.headers,
    messageId: message.messageId ? `<${message.messageId}>` : undefined,
    // The VERP envelope sender, when there is one: bounces come back to an address naming the message.
    envelope: message.envelopeFrom ? { from: message.envelopeFrom, to: message.to } : undefined,
    // A sending domain's own key replaces the transport's (nodemailer takes `dkim` per message).
    ...(message.dkim ? { dkim: { ...message.dkim, headerFieldNames: DKIM_SIGNED_HEADERS.join(':') } } : {}),
  };
}

/**
 * The header fields the DKIM signature covers (those a message carries; absent ones are left out
 * of `h=`): every field a receiver shows or acts on. Nodemailer's default list leaves out
 * `List-Unsubscribe-Post`, which RFC 8058 §4 requires signed with `List-Unsubscribe`, or a mail
 * provider does not offer one-click unsubscribe.
 */
export const DKIM_SIGNED_HEADERS = [
  'From',
  'Sender',
  'Reply-To',
  'To',
  'Cc',
  'Subject',
  'Date',
  'Message-ID',
  'In-Reply-To',
  'References',
  'MIME-Version',
  'Content-Type',
  'Content-Transfer-Encoding',
  'List-Id',
  'List-Unsubscribe',
  'List-Unsubscribe-Post',
] as const;

function dkimOptions(dkim: TransportConfig['dkim']) {
  return dkim
    ? { domainName: dkim.domain, keySelector: dkim.selector, privateKey: dkim.privateKey, headerFieldNames: DKIM_SIGNED_HEADERS.join(':') }
    : undefined;
}

/**
 * Wraps a send function so `close()` waits for the messages already handed over: a graceful
 * shutdown (and a test's teardown) does not cut a message in half.
 */
function tracked(
  send: (m: MailMessage, relay?: string) => Promise<SendResult>,
  verify: () => Promise<void>,
  closeInner: () => void,
  relays?: Relay[],
): Transport {
  const inFlight = new Set<Promise<unknown>>();
  return {
    send(message, relay) {
      const sending = send(message, relay);
      const settled: Promise<unknown> = sending.catch(() => undefined).finally(() => inFlight.delete(settled));
      inFlight.add(settled);
      return sending;
    },
    verify,
    async close() {
      await Promise.all(inFlight);
      closeInner();
    },
    ...(relays ? { relays } : {}),
  };
}

/**
 * SMTP connections a relay's pool opens at most, unless its URL says `pool=`. A queue worker hands
 * as many messages to the transport at once as its relays have connections: more would only wait
 * inside the pools, counting in the in-flight window without sending sooner.
 */
export const SMTP_POOL_CONNECTIONS = 5;

/** One relay: an SMTP pool (`smtp://`, `smtps://`, credentials and `tls.*` options in the URL). */
function smtpRelay(spec: RelaySpec, dkim: TransportConfig['dkim']) {
  const connections = spec.pool ?? SMTP_POOL_CONNECTIONS;
  // Shorter timeouts than nodemailer's minutes-long defaults, so a dead server fails a send (to be
  // retried) instead of holding it and a shutdown; the URL's own query options still win.
  const mailer = nodemailer.createTransport({
    url: spec.url,
    pool: true,
    maxConnections: connections,
    maxMessages: 100,
    connectionTimeout: 15_000,
    greetingTimeout: 15_000,
    socketTimeout: 60_000,
    dkim: dkimOptions(dkim),
  });
  return {
    info: { name: spec.name, rate: spec.rate, connections } satisfies Relay,
    async send(message: MailMessage): Promise<SendResult> {
      try {
        const info = await mailer.sendMail(mailOptions(message));
        if (info.rejected?.length) throw new TransportError(`recipient rejected: ${info.rejected.join(', ')}`, true);
        return { messageId: bareMessageId(info.messageId) ?? '', response: String(info.response ?? '') };
      } catch (err) {
        throw toTransportError(err);
      }
    },
    async verify(): Promise<void> {
      try {
        await mailer.verify();
      } catch (err) {
        throw toTransportError(err);
      }
    },
    close: () => mailer.close(),
  };
}

/**
 * The SMTP relays of `SMTP_URL` (one or several, comma-separated, each with its `rate` and
 * `pool`), each an SMTP pool. The queue worker names the relay of each message (rates, pauses:
 * `delivery/relays.ts`); without a name, `send` tries each relay in turn, from the next one each
 * time, passing a busy relay by, with no rate. `verify` succeeds when one relay answers.
 */
export function smtpTransport(smtpUrl: string, dkim: TransportConfig['dkim']): Transport {
  const pools = parseSmtpRelays(smtpUrl).map((spec) => smtpRelay(spec, dkim));
  const byName = new Map(pools.map((p) => [p.info.name, p]));
  let turn = 0;
  return tracked(
    async (message, relay) => {
      if (relay !== undefined) {
        const pool = byName.get(relay);
        if (!pool) throw new TransportError(`no relay named ${relay}`, false);
        return pool.send(message);
      }
      const first = turn++ % pools.length;
      for (let i = 0; ; i++) {
        try {
          return await pools[(first + i) % pools.length].send(message);
        } catch (err) {
          if (!(err instanceof TransportError && err.relayBusy) || i === pools.length - 1) throw err;
        }
      }
    },
    async () => {
      const results = await Promise.allSettled(pools.map((p) => p.verify()));
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed && results.every((r) => r.status === 'rejected')) throw failed.reason;
    },
    () => pools.forEach((p) => p.close()),
    pools.map((p) => p.info),
  );
}

/** The part of an outbox file's name that comes from the mail's Message-ID: its local part, safe as a file name. */
export function outboxFileStem(messageId: string): string {
  return messageId
    .split('@')[0]
    .replace(/[^A-Za-z0-9_.-]/g, '_')
    .slice(0, 100);
}

/**
 * The default without SMTP: every message is written, as the RFC 822 text a server would have
 * received (DKIM-signed when configured), to `<outboxDir>/<time>-<Message-ID's local part>.eml`. The file is
 * written under a temporary name and renamed, so a reader never sees half a message.
 */
export function outboxTransport(outboxDir: string, dkim: TransportConfig['dkim']): Transport {
  const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows', dkim: dkimOptions(dkim) });
  let ready: Promise<unknown> | null = null;
  const ensureDir = () =>
    (ready ??= mkdir(outboxDir, { recursive: true }).catch((err) => {
      ready = null;
      throw err;
    }));
  return tracked(
    async (message) => {
      try {
        const info = await composer.sendMail(mailOptions(message));
        await ensureDir();
        const messageId = bareMessageId(info.messageId);
        const stem = messageId ? outboxFileStem(messageId) : randomBytes(6).toString('hex');
        const name = `${new Date().toISOString().replace(/[-:.]/g, '')}-${stem}.eml`;
        const file = join(outboxDir, name);
        await writeFile(`${file}.tmp`, info.message as Buffer);
        await rename(`${file}.tmp`, file);
        return { messageId: messageId ?? '', response: file };
      } catch (err) {
        // A full disk or a missing folder is temporary: nothing says the recipient is bad.
        throw err instanceof TransportError ? err : new TransportError(`outbox: ${(err as Error).message}`, false);
      }
    },
    async () => {
      ready = null;
      await ensureDir();
    },
    () => composer.close(),
  );
}

/** The transport the configuration names: SMTP when `SMTP_URL` is set, else the outbox folder. */
export function createTransport(config: TransportConfig): Transport {
  return config.smtpUrl ? smtpTransport(config.smtpUrl, config.dkim) : outboxTransport(config.outboxDir, config.dkim);
}

/**
 * The From address of the service's own mails (verification links, notifications): no-reply at
 * the DKIM domain when one is configured (so the signature aligns), else at PUBLIC_URL's host.
 */
export function systemFrom(config: Pick<Config, 'dkim' | 'publicUrl'>): { name: string; address: string } {
  let host = config.dkim?.domain;
  if (!host) {
    try {
      host = new URL(config.publicUrl).hostname;
    } catch {
      host = 'localhost';
    }
  }
  return { name: 'Campaign API', address: `no-reply@${host || 'localhost'}` };
}
