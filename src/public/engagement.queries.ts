/**
 * What a recipient does with a message (opens it, unsubscribes through it), counted on the message
 * row and on the statistics of what sent it. The counting is keyed by the message's `kind`, so
 * every kind of mail (single sends now, automation emails next) counts the same way: one place
 * decides which statistics row a message feeds.
 */
import type { Db } from '../db/index.js';
import type { MailKind } from '../db/types.js';
import { isoMicros } from '../util/time.js';

/** A queued message as the public pages need it. */
export interface PublicMessage {
  id: number;
  user_id: number;
  kind: MailKind;
  email: string;
  single_send_id: number | null;
  automation_id: number | null;
  /** The unsubscribe group the message was sent under; null when it has none (global only). */
  groupId: number | null;
}

/** What a statistics row gains from one event. */
interface Delta {
  total_opens?: 1;
  unique_opens?: 0 | 1;
  unsubscribes?: 1;
}

/**
 * Per kind: where a message's events are counted. `system` mails (verification, notifications)
 * carry no statistics. Automations (issue 10) add their row here.
 */
const STATISTICS: Record<MailKind, ((db: Db, m: { single_send_id: number | null; automation_id: number | null }, delta: Delta) => Promise<void>) | null> = {
  single_send: async (db, m, delta) => {
    if (m.single_send_id === null) return;
    await db
      .updateTable('single_sends')
      .set((eb) => ({
        total_opens: eb('total_opens', '+', delta.total_opens ?? 0),
        unique_opens: eb('unique_opens', '+', delta.unique_opens ?? 0),
        unsubscribes: eb('unsubscribes', '+', delta.unsubscribes ?? 0),
      }))
      .where('id', '=', m.single_send_id)
      .execute();
  },
  automation: null,
  system: null,
};

/**
 * Counts one open of message `messageId`: `opens + 1`, `first_opened_at` set the first time, and on
 * what sent it `total_opens + 1` and, the first time only, `unique_opens + 1`, in one transaction.
 * "First" is decided by a conditional update (`WHERE first_opened_at IS NULL`) and its row count,
 * so two concurrent first opens count one unique open. Returns false when no such message exists.
 */
export async function countOpen(db: Db, messageId: number, now: Date): Promise<boolean> {
  const at = isoMicros(now);
  return db.transaction().execute(async (trx) => {
    const first = await trx
      .updateTable('mail_messages')
      .set({ first_opened_at: at })
      .where('id', '=', messageId)
      .where('first_opened_at', 'is', null)
      .executeTakeFirst();
    const row = await trx
      .updateTable('mail_messages')
      .set((eb) => ({ opens: eb('opens', '+', 1) }))
      .where('id', '=', messageId)
      .returning(['kind', 'single_send_id', 'automation_id'])
      .executeTakeFirst();
    if (!row) return false;
    const unique = Number(first.numUpdatedRows) === 1 ? 1 : 0;
    await STATISTICS[row.kind]?.(trx, row, { total_opens: 1, unique_opens: unique });
    return true;
  });
}

/**
 * Counts the first unsubscribe made through a message: its `unsubscribed` flag goes 0 → 1 by a
 * conditional update, and only that change adds 1 to `unsubscribes` of what sent it. Later
 * unsubscribes through the same message (another list, or again after re-subscribing) count
 * nothing. Run it in the transaction that made the unsubscribe. Returns whether it counted.
 */
export async function countUnsubscribe(db: Db, message: PublicMessage): Promise<boolean> {
  const res = await db
    .updateTable('mail_messages')
    .set({ unsubscribed: 1 })
    .where('id', '=', message.id)
    .where('unsubscribed', '=', 0)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) !== 1) return false;
  await STATISTICS[message.kind]?.(db, message, { unsubscribes: 1 });
  return true;
}

/**
 * The message a public link names, with the unsubscribe group it was sent under (a single send's
 * group; none for other kinds yet); undefined when it no longer exists.
 */
export async function findPublicMessage(db: Db, messageId: number): Promise<PublicMessage | undefined> {
  const row = await db
    .selectFrom('mail_messages as m')
    .leftJoin('single_sends as s', 's.id', 'm.single_send_id')
    .select(['m.id', 'm.user_id', 'm.kind', 'm.email', 'm.single_send_id', 'm.automation_id', 's.unsubscribe_group_id'])
    .where('m.id', '=', messageId)
    .executeTakeFirst();
  if (!row) return undefined;
  const { unsubscribe_group_id, ...rest } = row;
  return { ...rest, groupId: unsubscribe_group_id ?? null };
}
