import type { Selectable } from 'kysely';
import type { AppDeps } from '../deps.js';
import type { MailKind, MailMessageTable } from '../db/types.js';
import type { MailMessage } from '../delivery/transport.js';

/** A row of the mail queue as a worker claimed it. */
export type QueuedMessage = Selectable<MailMessageTable>;

/** What a renderer makes of one claimed message: the mail to send, or why it must not go. */
export type Rendered = { message: MailMessage } | { skip: 'suppressed' | 'cancelled'; reason: string };

/**
 * Renders a batch of claimed messages of one kind, in the same order. It compiles what is shared
 * (a send's design) once and joins per recipient; it checks suppression again at send time, so an
 * address unsubscribed after the recipients were resolved is skipped.
 */
export type Renderer = (deps: AppDeps, rows: QueuedMessage[]) => Promise<Rendered[]>;

/**
 * What the generic queue worker is given by the features that put mail in it: a renderer per
 * kind, and the work each tick does around the claim (start the sends that came due, complete
 * the ones with nothing left). Wired once, in the process entry.
 */
export interface QueueHooks {
  renderers: Record<MailKind, Renderer>;
  /** Before claiming: start what came due at `now` (e.g. a scheduled send: status 1 → 2, recipients resolved). */
  beforeClaim?: (deps: AppDeps, now: Date) => Promise<void>;
  /** After a batch settled: finish what has no message left (status 3, `sent_at`, notifications). */
  afterSettle?: (deps: AppDeps, now: Date) => Promise<void>;
  /**
   * When work outside the queue comes due (e.g. the next scheduled send), or null: an idle worker
   * wakes then, besides the queue's own next due message.
   */
  nextWakeAt?: (deps: AppDeps, now: Date) => Promise<Date | null>;
}
