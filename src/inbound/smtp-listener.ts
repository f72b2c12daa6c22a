/**
 * The inbound SMTP listener (`INBOUND_SMTP_PORT`, on `HOST`): receives the bounces and complaints
 * sent to the bounce address's domain (the VERP addresses `bounces+<token>@domain`) and takes in
 * each message as `POST /inbound/email/<token>` does. Mail for any other domain is refused at
 * RCPT TO; a message that cannot be read as MIME is refused for good (554), any other failure to
 * take a message in answers 451, so the sending server tries again.
 */
import { SMTPServer, type SMTPServerAddress } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import type { AppDeps } from '../deps.js';
import type { MailKinds } from '../messages/messages.kinds.js';
import { takeInMail } from './inbound.service.js';
import { UnreadableMail } from './parse.js';

/** The largest message taken in (a DSN returns at most the original's headers or a copy of it). */
export const MAX_INBOUND_BYTES = 10 * 1024 * 1024;

export interface InboundSmtp {
  /** The port it listens on (the configured one, or the one the system chose for port 0). */
  port: number;
  close(): Promise<void>;
}

/** An SMTP reply error (smtp-server answers with its `responseCode`). */
function reply(code: number, text: string): Error & { responseCode: number } {
  return Object.assign(new Error(text), { responseCode: code });
}

/** The domain of the bounce address (lower case), or null when none is set: then every domain is taken. */
function bounceDomain(deps: AppDeps): string | null {
  const address = deps.config.bounceAddress;
  return address ? address.slice(address.lastIndexOf('@') + 1).toLowerCase() : null;
}

/**
 * Starts the listener on `port` (default: the configured one) and `HOST`; resolves once it listens.
 * `kinds`: the kinds of mail the process knows (which say where a bounce is counted).
 */
export async function startInboundSmtp(deps: AppDeps, kinds: MailKinds, port = deps.config.inboundSmtpPort ?? 0): Promise<InboundSmtp> {
  const domain = bounceDomain(deps);
  if (!domain) deps.log.warn('inbound SMTP: BOUNCE_ADDRESS is not set, so mail for any domain is taken in');
  const server = new SMTPServer({
    logger: false,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: MAX_INBOUND_BYTES,
    banner: 'Campaign API bounce intake',
    // A shutdown waits at most this long for open sessions.
    closeTimeout: 2000,
    onRcptTo(address: SMTPServerAddress, _session, cb) {
      const at = address.address.lastIndexOf('@');
      const rcptDomain = at < 0 ? '' : address.address.slice(at + 1).toLowerCase();
      if (domain && rcptDomain !== domain) return cb(reply(550, '5.1.1 No such recipient here'));
      cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if ((stream as { sizeExceeded?: boolean }).sizeExceeded) return cb(reply(552, '5.3.4 Message too large'));
        const raw = Buffer.concat(chunks);
        takeInMail(
          deps,
          kinds,
          raw,
          'smtp',
          session.envelope.rcptTo.map((r) => r.address),
        ).then(
          () => cb(),
          (err) => {
            if (err instanceof UnreadableMail) {
              deps.log.info({ reason: err.message }, 'inbound SMTP: message refused, it cannot be read');
              return cb(reply(554, `5.6.0 ${err.message}`));
            }
            deps.log.error({ err }, 'inbound SMTP: message not taken in; the sender will try again');
            cb(reply(451, '4.3.0 Temporary failure, try again later'));
          },
        );
      });
    },
  });
  server.on('error', (err) => deps.log.warn({ err }, 'inbound SMTP: connection error'));
  await new Promise<void>((resolve, reject) => {
    const failed = (err: Error) => reject(err);
    server.server.once('error', failed);
    server.listen(port, deps.config.host, () => {
      server.server.off('error', failed);
      resolve();
    });
  });
  const bound = (server.server.address() as AddressInfo).port;
  deps.log.info({ port: bound, host: deps.config.host, domain }, 'inbound SMTP listening');
  return {
    port: bound,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
