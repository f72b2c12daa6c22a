/**
 * What a recipient does with a message (opens it, unsubscribes through it), counted on the message
 * row and on the statistics of what sent it. The counting is keyed by the message's `kind`, so
 * every kind of mail (single sends now, automation emails next) counts the same way: one place
 * decides which statistics row a message feeds.
 */
import { sql } from 'kysely';
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

/** What a statistics row gains from events. */
interface Delta {
  total_opens?: number;
  unique_opens?: number;
  unsubscribes?: number;
}

/** What a message names of the rows that keep its statistics. */
type Source = { single_send_id: number | null; automation_id: number | null };

/**
 * Per kind: where a message's events are counted. `system` mails (verification, notifications)
 * carry no statistics.
 */
const STATISTICS: Record<MailKind, ((db: Db, m: Source, delta: Delta) => Promise<void>) | null> = {
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
  automation: async (db, m, delta) => {
    if (m.automation_id === null) return;
    await db
      .updateTable('automations')
      .set((eb) => ({
        total_opens: eb('total_opens', '+', delta.total_opens ?? 0),
        total_unique_opens: eb('total_unique_opens', '+', delta.unique_opens ?? 0),
        total_unsubscribe: eb('total_unsubscribe', '+', delta.unsubscribes ?? 0),
      }))
      .where('id', '=', m.automation_id)
      .execute();
  },
  system: null,
};

/** The most message ids one `countOpens` call takes (well under both engines' parameter limits). */
export const MAX_OPENS_BATCH = 1000;

/**
 * Counts opens: each id once per hit (an id may repeat). In one transaction: each message's
 * `opens` grows by its hits and its `first_opened_at` is set if still empty; what sent it gains the
 * hits in `total_opens` and, for each message opened for the first time, 1 in `unique_opens`.
 * "First" is decided by a conditional update (`WHERE first_opened_at IS NULL`) and the rows it
 * changed, never by reading first, so concurrent first opens (in this process or another) count
 * one unique open. Ids of messages that no longer exist count nothing. At most MAX_OPENS_BATCH ids.
 */
export async function countOpens(db: Db, messageIds: readonly number[], now: Date): Promise<void> {
  const hits = new Map<number, number>();
  for (const id of messageIds) hits.set(id, (hits.get(id) ?? 0) + 1);
  if (hits.size === 0) return;
  // Ascending ids, so that concurrent batches lock rows in the same order.
  const ids = [...hits.keys()].sort((a, b) => a - b);
  const at = isoMicros(now);
  await db.transaction().execute(async (trx) => {
    const first = await trx
      .updateTable('mail_messages')
      .set({ first_opened_at: at })
      .where('id', 'in', ids)
      .where('first_opened_at', 'is', null)
      .returning('id')
      .execute();
    const firsts = new Set(first.map((r) => r.id));
    // One statement for the whole batch: the hits per id as a CASE (typed, so PostgreSQL can plan it).
    const added = sql<number>`case ${sql.ref('id')} ${sql.join(
      ids.map((id) => sql`when ${id} then cast(${hits.get(id)!} as integer)`),
      sql` `,
    )} else 0 end`;
    const rows = await trx
      .updateTable('mail_messages')
      .set((eb) => ({ opens: eb('opens', '+', added) }))
      .where('id', 'in', ids)
      .returning(['id', 'kind', 'single_send_id', 'automation_id'])
      .execute();
    const deltas = new Map<string, Source & { kind: MailKind; total: number; unique: number }>();
    for (const r of rows) {
      const key = `${r.kind}:${r.single_send_id}:${r.automation_id}`;
      const d = deltas.get(key) ?? { kind: r.kind, single_send_id: r.single_send_id, automation_id: r.automation_id, total: 0, unique: 0 };
      d.total += hits.get(r.id)!;
      d.unique += firsts.has(r.id) ? 1 : 0;
      deltas.set(key, d);
    }
    for (const key of [...deltas.keys()].sort()) {
      const d = deltas.get(key)!;
      await STATISTICS[d.kind]?.(trx, d, { total_opens: d.total, unique_opens: d.unique });
    }
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
 * The message a public link names, with the unsubscribe group it was sent under (its single
 * send's or automation's; none for system mail); undefined when it no longer exists.
 */
export async function findPublicMessage(db: Db, messageId: number): Promise<PublicMessage | undefined> {
  const row = await db
    .selectFrom('mail_messages as m')
    .leftJoin('single_sends as s', 's.id', 'm.single_send_id')
    .leftJoin('automations as a', 'a.id', 'm.automation_id')
    .select(['m.id', 'm.user_id', 'm.kind', 'm.email', 'm.single_send_id', 'm.automation_id'])
    .select((eb) => eb.fn.coalesce('s.unsubscribe_group_id', 'a.unsubscribe_group_id').as('unsubscribe_group_id'))
    .where('m.id', '=', messageId)
    .executeTakeFirst();
  if (!row) return undefined;
  const { unsubscribe_group_id, ...rest } = row;
  return { ...rest, groupId: unsubscribe_group_id ?? null };
}
