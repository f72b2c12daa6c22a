/**
 * What the ledger records: what happened to a message, as a discriminated union on `type`. Each
 * producer builds these and hands a list of them to `record` (`ledger.ts`).
 */
import type { MailKinds } from './messages.kinds.js';
import type { CounterDeltas, EventMessage, HourDeltas } from './sources.js';

/** The SMTP server accepted the message: `message` is the row the queue's sent mark settled (its guard). */
export interface DeliveredEvent {
  type: 'delivered';
  message: EventMessage;
}

/**
 * The message bounced. `after` says when: `attempt`, the queue just settled it as `bounced` at the
 * SMTP answer (never delivered); `accept`, reported after the SMTP accept (a DSN, a relay's
 * webhook): a `sent` message becomes `bounced` and leaves `delivered`.
 */
export interface BouncedEvent {
  type: 'bounced';
  id: number;
  after: 'attempt' | 'accept';
  bounce: 'hard' | 'soft';
  /** The server's words, kept as the suppression's detail. */
  detail: string | null;
}

/** Its recipient reported the message as spam. */
export interface ComplainedEvent {
  type: 'complained';
  id: number;
  detail: string | null;
}

/**
 * One open of the message (one pixel hit: each counts in the totals). `machine`: it was a machine's
 * (an image proxy that fetches on delivery, a prefetching agent; docs/engagement.md), counted in
 * `machine_opens` and never as a person's open. Absent: a person's.
 */
export interface OpenedEvent {
  type: 'opened';
  id: number;
  machine?: boolean;
}

/** The `link` of a click on the message's trap link, which no person sees (docs/engagement.md). */
export const TRAP_LINK = 0;

/**
 * One click of the message on tracked link `link` (or `TRAP_LINK`), whose link the caller checked
 * belongs to the message; `url` is where the click goes (the link's URL filled for the recipient).
 * `scanner`: its agent alone shows it is a scanner's. The ledger decides the rest (the trap link,
 * clicks close together), and may find an earlier click of the message to be a scanner's too.
 */
export interface ClickedEvent {
  type: 'clicked';
  id: number;
  link: number;
  url: string;
  scanner?: boolean;
}

/** Its recipient unsubscribed through the message (a list that stops its mail). */
export interface UnsubscribedEvent {
  type: 'unsubscribed';
  id: number;
}

/** What happened to a message, as the ledger records it. */
export type LedgerEvent = DeliveredEvent | BouncedEvent | ComplainedEvent | OpenedEvent | ClickedEvent | UnsubscribedEvent;

/** What the pipeline gives each transition: the kinds (which name each message's source) and the time. */
export interface LedgerContext {
  kinds: MailKinds;
  now: Date;
}

/** An event with its place in the list given to `record`. */
export interface Indexed<E> {
  index: number;
  event: E;
}

/** An event that counted: the message row its guarded update returned, and what it was the first of. */
export interface Counted<E> extends Indexed<E> {
  message: EventMessage;
  /** The message's first open (an open, or a click of a message never opened). */
  firstOpen?: boolean;
  /** The message's first click (on any link). */
  firstClick?: boolean;
  /** The message's first open by a person (opens). */
  firstHumanOpen?: boolean;
  /** Deltas the transition worked out for this event itself (clicks), read by its `counters` and `hours`. */
  counters?: CounterDeltas;
  hours?: Array<{ hour: string; delta: HourDeltas }>;
  /** No webhook event: a scanner's click. */
  quiet?: boolean;
}
