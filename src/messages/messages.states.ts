/**
 * The states of a message and the moves between them, declared once. Every write that changes a
 * message's `state` (in `messages.writes.ts` and `ledger.writes.ts`, the only files that write
 * `mail_messages`) names its move here first: `move` throws on a move not listed, so an illegal
 * transition is refused before any SQL runs, and the states a write starts from become its guard
 * (`where state in (…)`).
 *
 * - `queued`: waits for its due time (`next_attempt_at`).
 * - `held`: waits for its automation to be set live again; no worker claims it.
 * - `sending`: claimed by a worker (`lease_owner`) until its lease ends (`next_attempt_at`).
 * - `sent`: the SMTP server accepted it (it may still bounce later: a DSN, a relay's webhook).
 * - `bounced`, `suppressed`, `cancelled`: final.
 */
import type { MailState } from '../db/types.js';

/** Every state a message can be in. */
export const MAIL_STATES: readonly MailState[] = ['queued', 'held', 'sending', 'sent', 'bounced', 'suppressed', 'cancelled'];

/** The states a message in each state may move to. */
export const MOVES: { readonly [S in MailState]: readonly MailState[] } = {
  // claim; pause of its automation; the send, automation or address went away
  queued: ['sending', 'held', 'cancelled'],
  // its automation set live again; deleted
  held: ['queued', 'cancelled'],
  // the marks: accepted; a temporary failure or no relay free (back to wait; a lease that ran out
  // is claimed again as `sending`); the 5th temporary or a permanent failure; must not go
  sending: ['sent', 'queued', 'sending', 'bounced', 'suppressed', 'cancelled'],
  // a bounce reported after the accept
  sent: ['bounced'],
  bounced: [],
  suppressed: [],
  cancelled: [],
};

/** A write asked for a move `MOVES` does not list. */
export class IllegalTransition extends Error {
  constructor(
    readonly from: MailState,
    readonly to: MailState,
  ) {
    super(`a message cannot move from ${from} to ${to}`);
    this.name = 'IllegalTransition';
  }
}

/**
 * Checks that every state of `from` may move to `to` (throws `IllegalTransition` otherwise), and
 * returns `from`: the states the write's guard accepts.
 */
export function move(from: readonly MailState[], to: MailState): MailState[] {
  for (const f of from) if (!MOVES[f].includes(to)) throw new IllegalTransition(f, to);
  return [...from];
}

/** The states no worker will change any more: a message in them is finished. */
export const UNFINISHED: readonly MailState[] = ['queued', 'held', 'sending'];
