/**
 * What comes back after the SMTP accept: bounces and spam complaints, from any source (the keyed
 * report route, raw mail through the inbound route or SMTP listener, the relays' webhooks), taken
 * in through one function. Every source turns what it received into `InboundEvent`s and calls
 * `takeInEvent`; matching, de-duplication and the effects live here only.
 */
import type { AppDeps } from '../deps.js';

/** Where an event came from (its log line and metric label). */
export type InboundSource = 'report' | 'inbound' | 'smtp' | 'sendgrid' | 'mailgun' | 'postmark' | 'ses';

/** One bounce or complaint about one recipient, as a source reported it. */
export interface InboundEvent {
  source: InboundSource;
  kind: 'bounce' | 'complaint';
  /** For bounces: `hard` (the address or domain does not exist) or `soft` (anything else). Null for complaints. */
  type: 'hard' | 'soft' | null;
  /** The recipient the event concerns, as reported (null when the report names none). */
  email: string | null;
  /** What names the message, strongest first: a VERP address or token, then the original Message-ID. */
  verp?: string | null;
  messageId?: string | null;
  /** The server's answer or the provider's description (kept as the suppression's detail). */
  reason?: string | null;
  /**
   * Identifies the event for de-duplication: the provider's event id where it has one; else the
   * source derives one (e.g. a hash of the report). The same key twice counts once.
   */
  eventKey?: string | null;
}

/** What became of an event. */
export interface IntakeResult {
  /** Whether it named a message of this installation (and the account, when one was given). */
  matched: boolean;
  /** False when the same event was taken in before. */
  counted: boolean;
}

/**
 * Takes in one event: matches it to the exact message (VERP token, else `Message-ID`; within
 * `opts.userId`'s account when given), counts it once, and applies its effects in one transaction
 * (see docs/bounces.md). An event that names no message changes nothing but a log line and a
 * metric.
 */
export type TakeInEvent = (deps: AppDeps, event: InboundEvent, opts?: { userId?: number }) => Promise<IntakeResult>;

// placeholder: replaced by the intake implementation
export const takeInEvent: TakeInEvent = async () => ({ matched: false, counted: false });
