import type { Insertable } from 'kysely';
import type { Db } from '../../db/index.js';
import type { SendingDomainTable } from '../../db/types.js';

/** The account's sending domains. */
export function selectDomains(db: Db, userId: number) {
  return db.selectFrom('sending_domains').selectAll().where('user_id', '=', userId);
}

/** One sending domain of the account. */
export function findDomain(db: Db, userId: number, id: number) {
  return selectDomains(db, userId).where('id', '=', id).executeTakeFirst();
}

/** The account's sending domain of that name (an A-label), if any. */
export function findDomainByName(db: Db, userId: number, domain: string) {
  return selectDomains(db, userId).where('domain', '=', domain).executeTakeFirst();
}

export async function insertDomain(db: Db, values: Insertable<SendingDomainTable>): Promise<number> {
  const row = await db.insertInto('sending_domains').values(values).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/** Deletes one sending domain of the account; false when there was none. */
export async function deleteDomainRow(db: Db, userId: number, id: number): Promise<boolean> {
  const r = await db.deleteFrom('sending_domains').where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/**
 * Writes a check's outcome unless another check wrote since this one read the row (same
 * `last_checked_at`): of two racing checks one writes, so a change of status is told once.
 */
export async function saveCheck(
  db: Db,
  id: number,
  seen: string | null,
  values: { status: string; checks: string; last_checked_at: string },
): Promise<boolean> {
  const r = await db
    .updateTable('sending_domains')
    .set(values)
    .where('id', '=', id)
    .where((eb) => (seen === null ? eb('last_checked_at', 'is', null) : eb('last_checked_at', '=', seen)))
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Every account's domains not checked since `before` (or never), oldest check first. */
export function selectDueDomains(db: Db, before: string, limit: number) {
  return db
    .selectFrom('sending_domains')
    .selectAll()
    .where((eb) => eb.or([eb('last_checked_at', 'is', null), eb('last_checked_at', '<', before)]))
    .orderBy('last_checked_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** The oldest check of all domains (null: a domain never checked, or no domain). */
export async function oldestCheck(db: Db): Promise<{ any: boolean; oldest: string | null }> {
  const never = await db.selectFrom('sending_domains').select('id').where('last_checked_at', 'is', null).limit(1).executeTakeFirst();
  if (never) return { any: true, oldest: null };
  const row = await db
    .selectFrom('sending_domains')
    .select((eb) => eb.fn.min('last_checked_at').as('oldest'))
    .executeTakeFirst();
  return { any: row?.oldest != null, oldest: (row?.oldest as string | null) ?? null };
}

/** The account's sending domains of these names (A-labels), with their status. */
export function domainsNamed(db: Db, userId: number, names: readonly string[]) {
  return db
    .selectFrom('sending_domains')
    .select(['domain', 'status'])
    .where('user_id', '=', userId)
    .where('domain', 'in', [...names])
    .execute();
}
