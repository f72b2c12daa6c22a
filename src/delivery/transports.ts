import { randomBytes } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import type { Config } from '../config.js';
import { TransportError, type MailMessage, type SendResult, type Transport } from './transport.js';

/** The part of the configuration a transport needs. */
export type TransportConfig = Pick<Config, 'smtpUrl' | 'outboxDir' | 'dkim'>;

/** Nodemailer's error fields we read (every one optional). */
interface MailerError extends Error {
  code?: string;
  responseCode?: number;
  permanent?: boolean;
  response?: string;
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
  return new TransportError(e.response || e.message || String(err), permanent, code);
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
  };
}

/** `<id@host>` → `id@host`. */
function bareMessageId(id: string | undefined): string {
  return (id ?? '').replace(/^<|>$/g, '');
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
function tracked(send: (m: MailMessage) => Promise<SendResult>, verify: () => Promise<void>, closeInner: () => void): Transport {
  const inFlight = new Set<Promise<unknown>>();
  return {
    send(message) {
      const sending = send(message);
      const settled: Promise<unknown> = sending.catch(() => undefined).finally(() => inFlight.delete(settled));
      inFlight.add(settled);
      return sending;
    },
    verify,
    async close() {
      await Promise.all(inFlight);
      closeInner();
    },
  };
}

/**
 * SMTP connections the pool opens at most. A queue worker hands this many messages to the
 * transport at once: more would only wait inside the pool, counting in the in-flight window
 * without sending sooner.
 */
export const SMTP_POOL_CONNECTIONS = 5;

/** An SMTP pool (`smtp://`, `smtps://`, credentials and `tls.*` options in the URL). */
export function smtpTransport(url: string, dkim: TransportConfig['dkim']): Transport {
  // Shorter timeouts than nodemailer's minutes-long defaults, so a dead server fails a send (to be
  // retried) instead of holding it and a shutdown; the URL's own query options still win.
  const mailer = nodemailer.createTransport({
    url,
    pool: true,
    maxConnections: SMTP_POOL_CONNECTIONS,
    maxMessages: 100,
    connectionTimeout: 15_000,
    greetingTimeout: 15_000,
    socketTimeout: 60_000,
    dkim: dkimOptions(dkim),
  });
  return tracked(
    async (message) => {
      try {
        const info = await mailer.sendMail(mailOptions(message));
        if (info.rejected?.length) throw new TransportError(`recipient rejected: ${info.rejected.join(', ')}`, true);
        return { messageId: bareMessageId(info.messageId), response: String(info.response ?? '') };
      } catch (err) {
        throw toTransportError(err);
      }
    },
    async () => {
      try {
        await mailer.verify();
      } catch (err) {
        throw toTransportError(err);
      }
    },
    () => mailer.close(),
  );
}

/**
 * The default without SMTP: every message is written, as the RFC 822 text a server would have
 * received (DKIM-signed when configured), to `<outboxDir>/<time>-<random>.eml`. The file is
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
        const name = `${new Date().toISOString().replace(/[-:.]/g, '')}-${randomBytes(6).toString('hex')}.eml`;
        const file = join(outboxDir, name);
        await writeFile(`${file}.tmp`, info.message as Buffer);
        await rename(`${file}.tmp`, file);
        return { messageId: bareMessageId(info.messageId), response: file };
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
