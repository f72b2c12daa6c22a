/**
 * May the account mail this address? The one place that answers, in two reads used everywhere:
 *
 * 1. `suppressedSql`: an SQL condition for resolving recipients (single sends when they start,
 *    automation enrolments and steps, sign-up confirmations), run inside the resolving statement.
 * 2. `skipsAmong`: one batch check of claimed queue rows, run once per batch before rendering;
 *    it says which rows must not go and why.
 *
 * The lists they read are written by `suppression.writes.ts`: unsubscribes (global and per group,
 * `unsubscribers`), suppressions (`suppressions`: hard bounces, soft bounces at the threshold,
 * complaints), and erased addresses (`erased_addresses`, keyed hashes); and by `sunset.sweep.ts`:
 * the addresses the account's sunset policy finds inactive (`suppressions`, reason `inactive`),
 * which stop campaign mail only.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/index.js';
import type { SuppressionReason } from '../db/types.js';
import { erasureHash, type GroupKey } from './suppression.writes.js';

/**
 * True when the account must not send campaign mail to the address `emailKey` (an SQL expression,
 * lower case) under the unsubscribe group `groupId`: it is on the global unsubscribe list, on the
 * group's list, or on the suppression list (hard bounce, soft bounces at the threshold, complaint,
 * and, unless `opts.inactive` is false, inactive under the sunset policy). Erased addresses are not
 * checked here: their hashes are keyed with the app secret, which SQL does not hold, so the batch
 * check (`skipsAmong`) catches them before any mail is rendered.
 */
export function suppressedSql(
  userId: number,
  groupId: GroupKey,
  emailKey: RawBuilder<unknown>,
  opts: { inactive?: boolean } = {},
): RawBuilder<boolean> {
  const reasons = opts.inactive === false ? sql` and b.reason <> 'inactive'` : sql``;
  return sql<boolean>`(exists (
      select 1 from unsubscribers u
      where u.user_id = ${userId} and u.email_key = ${emailKey}
        and (u.unsubscribe_groups_id is null or u.unsubscribe_groups_id = ${groupId})
    ) or exists (select 1 from suppressions b where b.user_id = ${userId} and b.email_key = ${emailKey}${reasons}))`;
}

/**
 * Whether the account must not mail `email` under `groupId` (the SQL condition, for one address).
 * Inactivity under the sunset policy does not count here: the one caller is a sign-up, where the
 * person just asked for mail, and its confirmation is the service's own mail.
 */
export async function isSuppressed(db: Db, userId: number, email: string, groupId: GroupKey = null): Promise<boolean> {
  const key = sql`${email.trim().toLowerCase()}`;
  const { rows } = await sql<{ hit: unknown }>`select ${suppressedSql(userId, groupId, key, { inactive: false })} as hit`.execute(db);
  // SQLite answers 0/1, PostgreSQL a boolean.
  return rows[0]?.hit === true || Number(rows[0]?.hit) === 1;
}

/** Why a claimed message must not go: an unsubscribe, a suppression's reason, or an erasure. */
export type SkipReason = 'unsubscribed' | 'unsubscribed_from_group' | SuppressionReason | 'erased';

/** The text a skipped message keeps in `last_error`, by reason. */
export const SKIP_TEXTS: Record<SkipReason, string> = {
  unsubscribed: 'unsubscribed from every mail',
  unsubscribed_from_group: 'unsubscribed from the unsubscribe group',
  hard_bounce: 'the address bounced before',
  soft_bounces: 'the address bounced before',
  complaint: 'the address complained of a message (spam report)',
  inactive: 'the address is inactive (sunset policy: no open or click by a person for too long)',
  erased: 'the address was erased by the account',
};

/** A claimed message as the batch check sees it. */
export interface ClaimedAddress {
  user_id: number;
  /** The address in lower case. */
  email_key: string;
  /**
   * The unsubscribe lists that stop this mail: `{ group }` for campaign mail (the global list,
   * and that group's when not null), or null for the service's own mail (sender verification,
   * notifications), which no unsubscribe stops. Suppressions and erasures stop every mail.
   */
  lists: { group: GroupKey } | null;
}

/**
 * Of the claimed `rows`, which must be skipped and why (null: it may go), in input order. A
 * suppression (bounce, complaint) comes first, then an erasure (the address's keyed hash, computed
 * here with `appSecret`, is in `erased_addresses`), then the global and the group's unsubscribe
 * lists. An `inactive` entry (the sunset policy) stops campaign mail (and its test mails) only,
 * as the unsubscribe lists do. Only each row's own account counts. At most three queries for the batch.
 */
export async function skipsAmong(db: Db, rows: readonly ClaimedAddress[], appSecret: string): Promise<Array<SkipReason | null>> {
  if (rows.length === 0) return [];
  const users = [...new Set(rows.map((r) => r.user_id))];
  const keys = [...new Set(rows.map((r) => r.email_key))];
  const suppressed = new Map<string, SkipReason>();
  for (const s of await db
    .selectFrom('suppressions')
    .select(['user_id', 'email_key', 'reason'])
    .where('user_id', 'in', users)
    .where('email_key', 'in', keys)
    .execute())
    suppressed.set(`${s.user_id} ${s.email_key}`, s.reason);

  const hashOf = new Map(keys.map((k) => [k, erasureHash(appSecret, k)]));
  const erased = new Set(
    (
      await db
        .selectFrom('erased_addresses')
        .select(['user_id', 'hash'])
        .where('user_id', 'in', users)
        .where('hash', 'in', [...hashOf.values()])
        .execute()
    ).map((e) => `${e.user_id} ${e.hash}`),
  );

  const listed = rows.filter((r) => r.lists !== null);
  const unsubscribed = new Set(
    listed.length === 0
      ? []
      : (
          await db
            .selectFrom('unsubscribers')
            .select(['user_id', 'email_key', 'unsubscribe_groups_id'])
            .where('user_id', 'in', [...new Set(listed.map((r) => r.user_id))])
            .where('email_key', 'in', [...new Set(listed.map((r) => r.email_key))])
            .execute()
        ).map((u) => `${u.user_id} ${u.email_key} ${u.unsubscribe_groups_id ?? 'global'}`),
  );

  return rows.map((r) => {
    const at = `${r.user_id} ${r.email_key}`;
    const reason = suppressed.get(at);
    if (reason && reason !== 'inactive') return reason;
    if (erased.has(`${r.user_id} ${hashOf.get(r.email_key)}`)) return 'erased';
    if (r.lists === null) return null;
    if (reason === 'inactive') return reason;
    if (unsubscribed.has(`${at} global`)) return 'unsubscribed';
    if (r.lists.group !== null && unsubscribed.has(`${at} ${r.lists.group}`)) return 'unsubscribed_from_group';
    return null;
  });
}

// Keeps one query's IN list well below both engines' bound-parameter limits.
const QUERY_CHUNK = 5_000;

/**
 * Of the given lower-case `keys`, those on the account's unsubscribe lists that stop mail under
 * `groupId` (the global list, and the group's when given): the unsubscribe part of the rules
 * alone, for the unsubscribe API. One query per 5,000 keys.
 */
export async function unsubscribedKeys(db: Db, userId: number, keys: readonly string[], groupId: GroupKey): Promise<Set<string>> {
  const hit = new Set<string>();
  for (let i = 0; i < keys.length; i += QUERY_CHUNK) {
    const rows = await db
      .selectFrom('unsubscribers')
      .select('email_key')
      .where('user_id', '=', userId)
      .where('email_key', 'in', keys.slice(i, i + QUERY_CHUNK))
      .where((eb) =>
        groupId === null
          ? eb('unsubscribe_groups_id', 'is', null)
          : eb.or([eb('unsubscribe_groups_id', 'is', null), eb('unsubscribe_groups_id', '=', groupId)]),
      )
      .execute();
    for (const r of rows) hit.add(r.email_key);
  }
  return hit;
}

/** The account's unsubscribe entries of one address (lower case): the global list and which groups, deleted ones included. */
export function unsubscribeEntriesOf(db: Db, userId: number, emailKey: string) {
  return db
    .selectFrom('unsubscribers')
    .select(['id', 'unsubscribe_groups_id'])
    .where('user_id', '=', userId)
    .where('email_key', '=', emailKey)
    .execute();
}

/** The account's suppression list (select builder: `id`, `email`, `reason`, `detail`, `created_at`), for the API's list and a contact's export. */
export function suppressionEntries(db: Db, userId: number) {
  return db.selectFrom('suppressions').select(['id', 'email', 'reason', 'detail', 'created_at']).where('user_id', '=', userId);
}
