import { randomUUID } from 'node:crypto';
import { countersOf, statisticsOf, type Stats } from '../../delivery/statistics.js';
import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/index.js';
import { lockAccountSegments } from '../../db/dialect.js';
import { queryListSource } from '../../http/list-source.js';
import { softDeleteOwned } from '../../db/soft-delete.js';
import { AppError, Conflict, NotFound, Rnf, RNF, type FieldErrors, type NotFoundText } from '../../http/errors.js';
import { Rules } from '../../http/messages.js';
import { utrOf } from '../../http/schemas.js';
import { isoMicros, sqlDateTime } from '../../util/time.js';
import { enqueueEvent } from '../notifications/notifications.events.js';
import { refreshEngagementSegments } from '../segments/segments.live.js';
import { findUnsubscribeGroup } from '../unsubscribes/groups.queries.js';
import {
  automationKind,
  automationLive,
  automationPaused,
  automationsDeleted,
  scheduleAdded,
  scheduleRemoved,
} from './automations.engine.js';
import {
  automationIdsByUtr,
  countSchedules,
  deleteSchedule,
  findAutomation,
  findSchedule,
  insertAutomation,
  insertSchedule,
  lockAutomation,
  moveStatus,
  selectAutomationsWithCounts,
  selectSchedules,
  updateAutomationRow,
} from './automations.queries.js';
import { checkAutomation, checkAutomationFields, checkSchedule, targetExists } from './automations.rules.js';
import { enrollMembers } from './automations.enroll.js';
import {
  toAutomation,
  toSchedule,
  type CreateAutomationInput,
  type CreateScheduleInput,
  type UpdateAutomationInput,
} from './automations.schema.js';
import { AUTOMATION_STATUS, AUTOMATION_TYPE, type AutomationRow } from './automations.types.js';

/** Set live's refusals (422, a text: what the automation lacks). */
export const NO_GROUP = 'Unsubscribe group require to live automation';
export const NO_EMAIL = 'Add at least one email to live automation';
export const NO_TARGET = 'The contact type or segment of the automation no longer exists';

/** The list source of the account's automations, each with its number of emails. */
export function listAutomations(deps: AppDeps, userId: number) {
  return queryListSource(
    () => selectAutomationsWithCounts(deps.database.db, userId),
    'a.id',
    (rows: Array<AutomationRow & { automation_schedule_count: unknown }>) =>
      rows.map((r) => ({ ...toAutomation(r), automation_schedule_count: Number(r.automation_schedule_count ?? 0) })),
  );
}

/** The account's live automation named by a query's utr, or the endpoint's not-found text. */
export async function requireAutomation(db: Db, userId: number, rawUtr: unknown, text: NotFoundText = Rnf): Promise<AutomationRow> {
  const utr = utrOf(rawUtr);
  const row = utr ? await findAutomation(db, userId, utr) : undefined;
  if (!row) throw new NotFound(text);
  return row;
}

/** `lockAutomation` by a query's utr, or `Record not found`. */
export async function lockRequired(trx: Db, userId: number, rawUtr: unknown): Promise<AutomationRow> {
  const utr = utrOf(rawUtr);
  const row = utr ? await lockAutomation(trx, userId, utr) : undefined;
  if (!row) throw new NotFound(Rnf);
  return row;
}

/** One automation (details: `Record Not Found` when it is not the account's). */
export async function getAutomation(deps: AppDeps, userId: number, rawUtr: unknown) {
  return toAutomation(await requireAutomation(deps.database.db, userId, rawUtr, RNF));
}

/** An automation's detailed statistics, over all its emails (`Record not found` when it is not the account's). */
export async function getAutomationStats(deps: AppDeps, userId: number, rawUtr: unknown): Promise<Stats> {
  const row = await requireAutomation(deps.database.db, userId, rawUtr);
  return statisticsOf(
    deps.database.db,
    { table: 'automations', id: row.id },
    countersOf(row, automationKind.source!.counters, Number(row.total_triggered)),
  );
}

/** Saves a new automation as a draft (status 0); returns its utr. */
export async function createAutomation(
  deps: AppDeps,
  userId: number,
  input: CreateAutomationInput,
  schemaFailures: FieldErrors,
): Promise<string> {
  const columns = await checkAutomation(deps, userId, input, new Rules(schemaFailures));
  const at = isoMicros(deps.clock.now());
  const utr = randomUUID();
  await insertAutomation(deps.database.db, {
    user_id: userId,
    utr,
    ...columns,
    status: AUTOMATION_STATUS.draft,
    created_at: at,
    updated_at: at,
  });
  return utr;
}

/** Update's refusal (409): a live automation keeps its target. */
export const LIVE_TARGET = 'A live automation cannot change its contact type or segment: pause it first';
/** Why a welcome automation's members of a new target never get its emails. */
export const MEMBER_BEFORE_MOVE = 'a member of the target before the automation moved to it';

/**
 * Changes an automation's name, target, group and exit rule (update: the fields create takes,
 * with its rules; `exit_criteria` left out stays). Its status, type, emails and statistics stay.
 * Only a draft or paused automation can change its target (409 otherwise). A paused one, which
 * has gone live before, enrols the new target's members at once, as going live does (a custom
 * one to run the sequence when it is live again, a welcome one as already there), so that later
 * only real joiners of the new target start the sequence; enrollments from the old target stay.
 */
export async function updateAutomation(
  deps: AppDeps,
  userId: number,
  input: UpdateAutomationInput,
  schemaFailures: FieldErrors,
): Promise<void> {
  const rules = new Rules(schemaFailures);
  // A missing utr is a field failure reported with the others; an unknown one is not found.
  if (!rules.failed('utr')) await requireAutomation(deps.database.db, userId, input.utr);
  const columns = await checkAutomationFields(deps, userId, input, rules);
  const now = deps.clock.now();
  await deps.database.db.transaction().execute(async (trx) => {
    // Set live's lock order: the account's membership lock (contact writes enrol joiners under it), then the row.
    await lockAccountSegments(trx, userId);
    const row = await lockRequired(trx, userId, input.utr);
    const moved = Number(row.automation_for) !== columns.automation_for || row.automation_for_table !== columns.automation_for_table;
    if (moved && row.status === AUTOMATION_STATUS.live) throw new Conflict(LIVE_TARGET);
    const updated = await updateAutomationRow(trx, row.id, columns, now);
    if (moved && updated.live_at !== null) {
      const welcome = updated.automation_type === AUTOMATION_TYPE.welcome;
      await enrollMembers(trx, updated, now, welcome ? { asExited: MEMBER_BEFORE_MOVE } : {});
    }
  });
}

/**
 * Copies an automation as a draft named `<name> (copy)`, never live (`live_at` null), with zero
 * statistics and a copy of each email (fresh utrs, same order); returns the copy's utr.
 */
export async function duplicateAutomation(deps: AppDeps, userId: number, rawUtr: unknown): Promise<string> {
  const at = isoMicros(deps.clock.now());
  const utr = randomUUID();
  await deps.database.db.transaction().execute(async (trx) => {
    const row = await requireAutomation(trx, userId, rawUtr);
    const id = await insertAutomation(trx, {
      user_id: userId,
      utr,
      automation_name: `${row.automation_name} (copy)`,
      automation_type: row.automation_type,
      automation_for: row.automation_for,
      automation_for_table: row.automation_for_table,
      exit_criteria: row.exit_criteria,
      unsubscribe_group_id: row.unsubscribe_group_id,
      status: AUTOMATION_STATUS.draft,
      live_at: null,
      created_at: at,
      updated_at: at,
    });
    for (const s of await selectSchedules(trx, row.id)) {
      const { id: _old, ...email } = s;
      await insertSchedule(trx, { ...email, automation_id: id, utr: randomUUID(), created_at: at, updated_at: at });
    }
  });
  return utr;
}

/** What the `automation.live` and `automation.paused` notes say. */
function eventDetails(row: AutomationRow) {
  return { automation_name: row.automation_name, utr: row.utr, live_at: row.live_at === null ? null : sqlDateTime(new Date(row.live_at)) };
}

/**
 * Pauses a live automation (status 0, `live_at` kept): its queued messages are held until it is
 * set live again. Anything but a live automation of the account: `Record not found`.
 */
export async function pauseAutomation(deps: AppDeps, userId: number, rawUtr: unknown): Promise<void> {
  const now = deps.clock.now();
  await deps.database.db.transaction().execute(async (trx) => {
    const row = await lockRequired(trx, userId, rawUtr);
    const paused =
      row.status === AUTOMATION_STATUS.live && (await moveStatus(trx, row.id, AUTOMATION_STATUS.live, AUTOMATION_STATUS.draft, now));
    if (!paused) throw new NotFound(Rnf);
    await automationPaused(trx, row.id, now);
    await enqueueEvent(trx, deps, userId, 'automation.paused', eventDetails(paused));
  });
}

/**
 * Sets an automation live (status 1; `live_at` the first time only, so a welcome automation keeps
 * enrolling those who joined after it first went live) and starts it. It needs a live unsubscribe
 * group, at least one email and a live target (422 texts otherwise). Setting a live automation
 * live again succeeds and changes nothing.
 */
export async function setAutomationLive(deps: AppDeps, userId: number, rawUtr: unknown): Promise<void> {
  const now = deps.clock.now();
  await deps.database.db.transaction().execute(async (trx) => {
    // First the account's membership lock, which contact writes hold: no contact joins the target
    // between the engine's enrolment below and this commit unseen.
    await lockAccountSegments(trx, userId);
    const row = await lockRequired(trx, userId, rawUtr);
    if (row.status === AUTOMATION_STATUS.live) return;
    if (row.unsubscribe_group_id === null || !(await findUnsubscribeGroup(trx, userId, row.unsubscribe_group_id))) {
      throw new AppError(422, NO_GROUP);
    }
    if ((await countSchedules(trx, row.id)) === 0) throw new AppError(422, NO_EMAIL);
    if (!(await targetExists(trx, userId, row))) throw new AppError(422, NO_TARGET);
    // A segment with engagement conditions as of this moment: its members now are those at go-live.
    if (row.automation_for_table === 'segments') await refreshEngagementSegments(trx, deps, userId, [Number(row.automation_for)], now);
    const live = await moveStatus(trx, row.id, AUTOMATION_STATUS.draft, AUTOMATION_STATUS.live, now, row.live_at ?? isoMicros(now));
    if (!live) throw new NotFound(Rnf);
    await automationLive(trx, deps, live, now);
    await enqueueEvent(trx, deps, userId, 'automation.live', eventDetails(live));
  });
}

/**
 * Soft-deletes automations by utr and stops them: their unsent messages are cancelled. Unknown
 * utrs are ignored; `Record not found` when none of them is a live automation of the account.
 */
export async function deleteAutomations(deps: AppDeps, userId: number, rawUtrs: unknown[]): Promise<number> {
  const utrs = [...new Set(rawUtrs.map(utrOf).filter((u): u is string => u !== null))];
  if (utrs.length === 0) throw new NotFound(Rnf);
  const now = deps.clock.now();
  return deps.database.db.transaction().execute(async (trx) => {
    const ids = await automationIdsByUtr(trx, userId, utrs);
    const n = await softDeleteOwned(trx, 'automations', userId, ids, now);
    if (n === 0) throw new NotFound(Rnf);
    await automationsDeleted(trx, ids, now);
    return n;
  });
}

/** An automation's emails in the order they run (`Record not found` when it is not the account's). */
export async function listSchedules(deps: AppDeps, userId: number, rawUtr: unknown) {
  const { db } = deps.database;
  const automation = await requireAutomation(db, userId, rawUtr);
  return (await selectSchedules(db, automation.id)).map((s) => toSchedule(s, deps.config));
}

/**
 * Adds an email at the end of an automation (draft, live or paused) and tells the engine, so that
 * contacts who had every email so far wait for this one. Returns the new email's id and utr.
 */
export async function addSchedule(
  deps: AppDeps,
  userId: number,
  input: CreateScheduleInput,
  schemaFailures: FieldErrors,
): Promise<{ id: number; utr: string }> {
  const rules = new Rules(schemaFailures);
  // A missing utr is a field failure reported with the others; an unknown one is not found.
  if (!rules.failed('utr')) await requireAutomation(deps.database.db, userId, input.utr);
  const columns = await checkSchedule(deps, userId, input, rules);
  const now = deps.clock.now();
  const at = isoMicros(now);
  return deps.database.db.transaction().execute(async (trx) => {
    const automation = await lockRequired(trx, userId, input.utr);
    const row = await insertSchedule(trx, {
      user_id: userId,
      automation_id: automation.id,
      utr: randomUUID(),
      ...columns,
      created_at: at,
      updated_at: at,
    });
    await scheduleAdded(trx, row, now);
    return { id: row.id, utr: row.utr };
  });
}

/** Deletes one email by its utr; contacts waiting for it wait for the next one. `Record not found` when it is not the account's. */
export async function removeSchedule(deps: AppDeps, userId: number, rawUtr: unknown): Promise<void> {
  const utr = utrOf(rawUtr);
  if (!utr) throw new NotFound(Rnf);
  const now = deps.clock.now();
  await deps.database.db.transaction().execute(async (trx) => {
    const found = await findSchedule(trx, userId, utr);
    if (!found) throw new NotFound(Rnf);
    // The automation's lock first (as set live and schedule create take it), then the email again:
    // a concurrent delete of the automation or of this email has finished by then.
    await lockRequired(trx, userId, found.automation_utr);
    const current = await findSchedule(trx, userId, utr);
    if (!current) throw new NotFound(Rnf);
    const { automation_utr: _utr, ...schedule } = current;
    await scheduleRemoved(trx, schedule, now);
    await deleteSchedule(trx, schedule.id);
  });
}
