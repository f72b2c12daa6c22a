import type { Insertable, Updateable } from 'kysely';
import type { Db } from '../../db/index.js';
import { engineOf } from '../../db/dialect.js';
import type { AutomationScheduleTable, AutomationTable } from '../../db/types.js';
import { isoMicros } from '../../util/time.js';
import type { AutomationRow } from './automations.types.js';

/** The account's live (not deleted) automations. */
export function selectAutomations(db: Db, userId: number) {
  return db.selectFrom('automations').selectAll().where('user_id', '=', userId).where('deleted_at', 'is', null);
}

/** The account's live automations, each with `automation_schedule_count` (its number of emails). */
export function selectAutomationsWithCounts(db: Db, userId: number) {
  return db
    .selectFrom('automations as a')
    .selectAll('a')
    .select((eb) =>
      eb
        .selectFrom('automation_schedules as s')
        .select((e) => e.fn.countAll<number>().as('n'))
        .whereRef('s.automation_id', '=', 'a.id')
        .as('automation_schedule_count'),
    )
    .where('a.user_id', '=', userId)
    .where('a.deleted_at', 'is', null);
}

/** One live automation of the account by utr, or undefined (unknown, another account's, or deleted). */
export function findAutomation(db: Db, userId: number, utr: string) {
  return selectAutomations(db, userId).where('utr', '=', utr).executeTakeFirst();
}

/**
 * `findAutomation` that also locks the row until the transaction ends (PostgreSQL; SQLite has a
 * single writer already), so that set-live, pause, delete and email changes of one automation run
 * one after the other and each sees the other's result.
 */
export function lockAutomation(trx: Db, userId: number, utr: string) {
  return selectAutomations(trx, userId)
    .where('utr', '=', utr)
    .$if(engineOf(trx) === 'postgres', (q) => q.forUpdate())
    .executeTakeFirst();
}

/** Saves a new automation; returns its id. */
export async function insertAutomation(db: Db, values: Insertable<AutomationTable>): Promise<number> {
  const row = await db.insertInto('automations').values(values).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/**
 * Sets a live automation's status from `from` to `to` (and `live_at` when given); returns the
 * changed row, or undefined when it was not in `from` (or is deleted).
 */
export async function moveStatus(
  trx: Db,
  id: number,
  from: number,
  to: number,
  now: Date,
  liveAt?: string,
): Promise<AutomationRow | undefined> {
  const res = await trx
    .updateTable('automations')
    .set({ status: to, updated_at: isoMicros(now), ...(liveAt ? { live_at: liveAt } : {}) })
    .where('id', '=', id)
    .where('status', '=', from)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) return undefined;
  return trx.selectFrom('automations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** The account's live automations among `utrs` (their ids). */
export async function automationIdsByUtr(db: Db, userId: number, utrs: string[]): Promise<number[]> {
  const rows = await selectAutomations(db, userId).clearSelect().select('id').where('utr', 'in', utrs).execute();
  return rows.map((r) => r.id);
}

/** An automation's emails in the order they run (creation order, ascending id). */
export function selectSchedules(db: Db, automationId: number) {
  return db.selectFrom('automation_schedules').selectAll().where('automation_id', '=', automationId).orderBy('id').execute();
}

/** How many emails an automation has. */
export async function countSchedules(db: Db, automationId: number): Promise<number> {
  const row = await db
    .selectFrom('automation_schedules')
    .select((e) => e.fn.countAll<number>().as('n'))
    .where('automation_id', '=', automationId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** One email of the account by its utr, with its automation's utr; undefined when unknown or its automation is deleted. */
export function findSchedule(db: Db, userId: number, utr: string) {
  return db
    .selectFrom('automation_schedules as s')
    .innerJoin('automations as a', 'a.id', 's.automation_id')
    .selectAll('s')
    .select('a.utr as automation_utr')
    .where('s.user_id', '=', userId)
    .where('a.user_id', '=', userId)
    .where('s.utr', '=', utr)
    .where('a.deleted_at', 'is', null)
    .executeTakeFirst();
}

/** Saves a new email of an automation and returns the stored row. */
export function insertSchedule(db: Db, values: Insertable<AutomationScheduleTable>) {
  return db.insertInto('automation_schedules').values(values).returningAll().executeTakeFirstOrThrow();
}

/** Deletes one email (hard delete: an email has no history of its own). */
export async function deleteSchedule(db: Db, id: number): Promise<void> {
  await db.deleteFrom('automation_schedules').where('id', '=', id).execute();
}

/** Changes an automation's own fields (not its status) and returns the changed row. */
export async function updateAutomationRow(
  trx: Db,
  id: number,
  values: Pick<
    Updateable<AutomationTable>,
    'automation_name' | 'automation_for' | 'automation_for_table' | 'exit_criteria' | 'unsubscribe_group_id'
  >,
  now: Date,
): Promise<AutomationRow> {
  await trx
    .updateTable('automations')
    .set({ ...values, updated_at: isoMicros(now) })
    .where('id', '=', id)
    .execute();
  return trx.selectFrom('automations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}
