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
  /**
   * The envelope sender (SMTP `MAIL FROM`, the Return-Path), where bounces go: the message's VERP
   * address when `BOUNCE_ADDRESS` is set; absent: the From address.
   */
  envelopeFrom?: string;
  /** The sending domain's own DKIM key, which signs instead of the installation's (`DKIM_*`); set on the send path only. */
  dkim?: { domainName: string; keySelector: string; privateKey: string };
}

/** What rendering makes of one queued message: the mail to send, or why it must not go. */
export type Rendered = { message: MailMessage } | { skip: 'suppressed' | 'cancelled'; reason: string };

export interface SendResult {
  messageId: string;
  /** The server's reply (SMTP) or the file written (outbox). */
  response: string;
}

/**
 * A failed send: `permanent` for 5xx replies (a bounce), else temporary (retry with backoff).
 * `relayBusy`: the relay, not the message, is the problem — it throttles (421, 454, an enhanced
 * status 4.7.x) or cannot be reached (connection refused, connect or greeting timeout); the
 * message was certainly not accepted, so it may go through another relay at once.
 */
export class TransportError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
    readonly responseCode?: number,
    readonly relayBusy: 'throttled' | 'down' | null = null,
  ) {
    super(message);
  }
}

/** One SMTP relay of a transport, which the queue worker names when it sends. */
export interface Relay {
  /** `host:port`: in logs, metrics and `mail_messages.relay`. */
  readonly name: string;
  /** Most messages per second, for the whole installation; null: unlimited. */
  readonly rate: number | null;
  /** Connections its pool opens at most. */
  readonly connections: number;
}

/** What everything that mails talks to: SMTP pool, outbox files, or a test sink. */
export interface Transport {
  /**
   * Sends one message; `relay` names one of `relays` to send through (the queue worker, which keeps
   * their rates and pauses). Without it, SMTP tries each relay in turn, passing a busy one by.
   */
  send(message: MailMessage, relay?: string): Promise<SendResult>;
  /** Checks the transport can send (SMTP: connects and authenticates). */
  verify(): Promise<void>;
  close(): Promise<void>;
  /**
   * The SMTP relays behind it (`SMTP_URL`), each with its rate and pool; absent for a transport
   * with one destination and no limit (outbox files, a test's own transport).
   */
  readonly relays?: readonly Relay[];
}

/** The transport the configuration names (implemented in delivery/transports.ts). */
export type TransportFactory = (config: Config) => Transport;
