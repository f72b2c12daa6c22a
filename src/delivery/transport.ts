import type { Config } from '../config.js';

/** One outgoing message, already rendered. */
export interface MailMessage {
  from: { name: string; address: string } | string;
  to: string;
  replyTo?: string;
  subject: string;
  html?: string;
  text?: string;
  /** Extra headers (List-Unsubscribe, …). */
  headers?: Record<string, string>;
  /** Message-ID without angle brackets; generated when absent. */
  messageId?: string;
}

/** What rendering makes of one queued message: the mail to send, or why it must not go. */
export type Rendered = { message: MailMessage } | { skip: 'suppressed' | 'cancelled'; reason: string };

export interface SendResult {
  messageId: string;
  /** The server's reply (SMTP) or the file written (outbox). */
  response: string;
}

/** A failed send: `permanent` for 5xx replies (a bounce), else temporary (retry with backoff). */
export class TransportError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
    readonly responseCode?: number,
  ) {
    super(message);
  }
}

/** What everything that mails talks to: SMTP pool, outbox files, or a test sink. */
export interface Transport {
  send(message: MailMessage): Promise<SendResult>;
  /** Checks the transport can send (SMTP: connects and authenticates). */
  verify(): Promise<void>;
  close(): Promise<void>;
}

/** The transport the configuration names (implemented in delivery/transports.ts). */
export type TransportFactory = (config: Config) => Transport;
