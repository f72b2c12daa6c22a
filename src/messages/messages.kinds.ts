import type { AppDeps } from '../deps.js';
import type { Db } from '../db/index.js';
import type { DB, QueuedMessage } from '../db/types.js';
import type { Rendered } from '../delivery/transport.js';

/**
 * Renders a batch of claimed messages of one kind, in the same order. It compiles what is shared
 * (a send's design) once and joins per recipient. Suppression is not its concern: the mail lane
 * runs the suppression check (src/suppression/) on the whole batch first, so an address
 * unsubscribed, bounced or erased after the recipients were resolved never reaches it.
 */
export type Renderer = (deps: AppDeps, rows: QueuedMessage[]) => Promise<Rendered[]>;

/** The statistics an event adds to on what sent a message. */
export type SourceCounter =
  | 'delivered'
  | 'bounces'
  | 'hard_bounces'
  | 'soft_bounces'
  | 'spam_reports'
  | 'total_opens'
  | 'unique_opens'
  | 'total_clicks'
  | 'unique_clicks'
  | 'unsubscribes'
  | 'machine_opens'
  | 'unique_human_opens'
  | 'bot_clicks';

/**
 * What sends the messages of a kind and keeps their statistics: a row of `table`, named by the
 * message's `key` column, with a column per counter, the unsubscribe group its mail goes under,
 * and its public name. Its messages' webhook events name it by the kind's `name` and this `utr`.
 */
export interface MailSource {
  table: keyof DB & string;
  key: keyof QueuedMessage & string;
  counters: Record<SourceCounter, string>;
  /** The source row's column naming the unsubscribe group its mail is sent under. */
  group: string;
  /** The source row's column naming it in the API (its `utr`), which its messages' webhook events carry. */
  utr: string;
}

/**
 * A kind of mail: everything the queue and the engagement events need of it, declared by the one
 * module that puts such mail in the queue (as graphile-worker's tasks are), and listed once, in
 * `src/mail-kinds.ts`. The generic queue and job files name no kind; they ask the kinds they are
 * given. What a module does at a time outside the queue (start a send, step an automation) is a
 * scheduled task (`src/scheduled-tasks.ts`), not part of its kind.
 */
export interface MailKind {
  /** The value of `mail_messages.kind` for its messages. */
  name: string;
  render: Renderer;
  /** Where its messages' statistics are kept; null: counted nowhere (the service's own mail). */
  source: MailSource | null;
  /**
   * The unsubscribe group each of `rows` is sent under (null: none, only the global list stops
   * it), in order, for the suppression check run before rendering. Absent: the kind is the
   * service's own mail (sender verification, notifications), which no unsubscribe stops; bounces,
   * complaints and erasures stop every kind.
   */
  unsubscribeGroups?: (db: Db, rows: QueuedMessage[]) => Promise<Array<number | null>>;
  /** Its own share of the queue, by state, served on /metrics as `<name>_queue_depth`. */
  depth?: { help: string; count: (db: Db, now: Date) => Promise<Record<string, number>> };
}

/** The kinds of mail a process knows, by name. */
export type MailKinds = ReadonlyMap<string, MailKind>;

/** The registry of the given kinds, by name. */
export function mailKinds(...kinds: MailKind[]): MailKinds {
  return new Map(kinds.map((k) => [k.name, k]));
}
