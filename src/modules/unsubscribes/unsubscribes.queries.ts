import type { ExpressionBuilder } from 'kysely';
import type { DB } from '../../db/types.js';
import { isoMicros } from '../../util/time.js';
import type { Db } from '../../db/index.js';
import { emitEvents } from '../../events/outbox.js';

/**
 * Which list a query works on: `null` is the account's global unsubscribe list, a number is that
 * group's recipients. Global entries and group recipients share one table and these queries.
 */
export type GroupKey = number | null;

/** Where-clause of a group key (`IS NULL` for the global list). */
export function inGroup(groupId: GroupKey) {
  return (eb: ExpressionBuilder<DB, 'unsubscribers'>) =>
    groupId === null ? eb('unsubscribe_groups_id', 'is', null) : eb('unsubscribe_groups_id', '=', groupId);
}

/** The entries of one list of the account. */
export function selectUnsubscribers(db: Db, userId: number, groupId: GroupKey) {
  return db.selectFrom('unsubscribers').selectAll().where('user_id', '=', userId).where(inGroup(groupId));
}

// 6 values per row: far below SQLite's 32,766 and PostgreSQL's 65,535 bound parameters.
const INSERT_CHUNK = 500;

/**
 * Adds addresses to one list; an address already on it (compared lower-cased) is left alone. The
 * unique indexes make that hold under concurrency too: a clash inserts nothing (ON CONFLICT DO
 * NOTHING, no target, so either partial index counts). Every way onto a list (the API, the
 * recipient's preferences page and one-click, a spam complaint) comes through here: each new
 * entry writes its `contact.unsubscribed` event in the same transaction (data: `email`, `scope`
 * `global` or the group id, and `contact_id` when the unsubscribe came through a message sent to
 * a contact, `opts.contactId`). Returns each address's entry id, in input order, and how many
 * entries were new.
 */
export async function insertUnsubscribers(
  db: Db,
  userId: number,
  groupId: GroupKey,
  emails: string[],
  opts: { now: Date; contactId?: number | null },
): Promise<{ ids: number[]; added: number }> {
  const ids: number[] = [];
  let added = 0;
  const now = isoMicros(opts.now);
  for (let i = 0; i < emails.length; i += INSERT_CHUNK) {
    const chunk = emails.slice(i, i + INSERT_CHUNK);
    const keys = chunk.map((e) => e.toLowerCase());
    const rows = chunk.map((email, j) => ({
      user_id: userId,
      unsubscribe_groups_id: groupId,
      email_address: email,
      email_key: keys[j],
      created_at: now,
      updated_at: now,
    }));
    const inserted = await db
      .insertInto('unsubscribers')
      .values(rows)
      .onConflict((oc) => oc.doNothing())
      .returning(['id', 'email_address'])
      .execute();
    added += inserted.length;
    await emitEvents(
      db,
      opts.now,
      inserted.map((r) => ({
        userId,
        type: 'contact.unsubscribed' as const,
        data: {
          email: r.email_address,
          scope: groupId ?? 'global',
          ...(opts.contactId == null ? {} : { contact_id: opts.contactId }),
        },
        email: r.email_address,
      })),
    );
    const found = await selectUnsubscribers(db, userId, groupId)
      .clearSelect()
      .select(['id', 'email_key'])
      .where('email_key', 'in', keys)
      .execute();
    const byKey = new Map(found.map((r) => [r.email_key, r.id]));
    for (const k of keys) ids.push(byKey.get(k)!);
  }
  return { ids, added };
}

/**
 * Deletes the account's entries among `ids` on the global list (`global`) or on any of its live
 * groups (`groups`: a deleted group's recipients are out of reach). Returns how many.
 */
export async function deleteUnsubscribers(db: Db, userId: number, ids: number[], list: 'global' | 'groups'): Promise<number> {
  const res = await db
    .deleteFrom('unsubscribers')
    .where('user_id', '=', userId)
    .where('id', 'in', ids)
    .$if(list === 'global', (q) => q.where('unsubscribe_groups_id', 'is', null))
    .$if(list === 'groups', (q) =>
      q.where('unsubscribe_groups_id', 'in', (eb) =>
        eb.selectFrom('unsubscribe_groups').select('id').where('user_id', '=', userId).where('deleted_at', 'is', null),
      ),
    )
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/**
 * The lower-cased addresses suppressed for mail of the account sent under `groupId` (global
 * entries, plus that group's recipients when given), as a subquery for recipient resolution:
 * `.where('c.email_key', 'not in', suppressedKeys(db, userId, groupId))`.
 */
export function suppressedKeys(db: Db, userId: number, groupId: GroupKey) {
  return db
    .selectFrom('unsubscribers')
    .select('email_key')
    .where('user_id', '=', userId)
    .where((eb) =>
      groupId === null
        ? eb('unsubscribe_groups_id', 'is', null)
        : eb.or([eb('unsubscribe_groups_id', 'is', null), eb('unsubscribe_groups_id', '=', groupId)]),
    );
}

/** Of the given lower-cased keys, those suppressed under `groupId` (one query). */
export async function findSuppressedKeys(db: Db, userId: number, keys: string[], groupId: GroupKey): Promise<string[]> {
  if (keys.length === 0) return [];
  const rows = await suppressedKeys(db, userId, groupId).where('email_key', 'in', keys).execute();
  return rows.map((r) => r.email_key);
}

/** The lists an address is on: the global list and which groups (deleted ones included). */
export function entriesOfEmail(db: Db, userId: number, emailKey: string) {
  return db
    .selectFrom('unsubscribers')
    .select(['id', 'unsubscribe_groups_id'])
    .where('user_id', '=', userId)
    .where('email_key', '=', emailKey)
    .execute();
}
