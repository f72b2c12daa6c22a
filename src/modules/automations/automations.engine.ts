/**
 * The automations' part of the mail queue: turning due steps into queued messages, and what
 * set-live, pause, delete and email changes do to enrollments and queued mail.
 *
 * An enrollment waits for `next_schedule_id`, due at `due_at`. Each scheduler round, for every live
 * automation with a due enrollment, batches of due enrollments are stepped, each batch in one
 * transaction: those that must leave (unsubscribed, bounced, contact deleted, or out of the target
 * with `exit_criteria` 1) are marked exited; the rest get one mail queue row for the email and move
 * on to the next one (due after its wait from now), or to none. On PostgreSQL the step locks the
 * automation's row (`FOR NO KEY UPDATE`): steps of one automation run one at a time, and a pause or
 * an email change waits for the step in progress (and the step for them); enrolling joiners
 * (`FOR KEY SHARE`) and counting delivered mail go on beside it.
 */
import { sql } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/index.js';
import { engineOf, isoPlusSeconds, toCount } from '../../db/dialect.js';
import { suppressedSql } from '../../suppression/suppression.reads.js';
import type { ScheduledTask } from '../../jobs/scheduler.lane.js';
import type { MailKind } from '../../messages/messages.kinds.js';
import { wakeWorkers } from '../../messages/mail.queue.js';
import { enqueueSelected, moveMessages } from '../../messages/messages.writes.js';
import { isoMicros } from '../../util/time.js';
import { enrollMembers, MEMBER_BEFORE_LIVE } from './automations.enroll.js';
import { automationGroups, renderAutomationBatch } from './automations.message.js';
import { AUTOMATION_TYPE, waitMs, type AutomationRow, type AutomationScheduleRow } from './automations.types.js';

/** The kind of an automation's messages (`mail_messages.kind`). */
const KIND = 'automation';

/** Enrollments stepped per transaction. */
const STEP_BATCH = 1000;

/** Locks the automation's row against steps and enrollments in progress (PostgreSQL; SQLite writes one at a time). */
async function lockAutomation(trx: Db, automationId: number): Promise<void> {
  if (engineOf(trx) === 'postgres') await sql`select id from automations where id = ${automationId} for update`.execute(trx);
}

/**
 * Called by set-live, in its transaction (which holds the account's membership lock), after the
 * row was set to status 1: the current members not enrolled yet are enrolled (by a custom
 * automation to get its emails; by a welcome one as already there, so only later joiners get
 * them), messages held by a pause go back to the queue, and the workers wake.
 */
export async function automationLive(trx: Db, deps: AppDeps, automation: AutomationRow, now: Date): Promise<void> {
  const welcome = automation.automation_type === AUTOMATION_TYPE.welcome;
  await enrollMembers(trx, automation, now, welcome ? { asExited: MEMBER_BEFORE_LIVE } : {});
  await moveMessages(trx, { automation_id: [automation.id] }, { from: ['held'], to: 'queued', now });
  await wakeWorkers(trx);
}

/**
 * Called by pause, in its transaction, after the row was set to status 0: its queued messages are
 * held (no worker claims them) until it is set live again. Messages a worker already claimed go out.
 */
export async function automationPaused(trx: Db, automationId: number, now: Date): Promise<void> {
  await moveMessages(trx, { automation_id: [automationId] }, { from: ['queued'], to: 'held', now });
}

/** Called by delete and bulk delete, in their transaction, after the rows were soft-deleted: every enrollment stops, unsent messages are cancelled. */
export async function automationsDeleted(trx: Db, automationIds: number[], now: Date): Promise<void> {
  if (automationIds.length === 0) return;
  const at = isoMicros(now);
  await moveMessages(
    trx,
    { automation_id: automationIds },
    { from: ['queued', 'held'], to: 'cancelled', now, lastError: 'the automation was deleted' },
  );
  await trx
    .updateTable('automation_enrollments')
    .set({ state: 'exited', exit_reason: 'the automation was deleted', due_at: null, updated_at: at })
    .where('automation_id', 'in', automationIds)
    .where('state', '=', 'active')
    .execute();
}

/**
 * Points the enrollments of `automationId` waiting for `from` (null: waiting at the end) at
 * `to`, due its wait after their previous step (or at none).
 */
async function repoint(trx: Db, automationId: number, from: number | null, to: AutomationScheduleRow | undefined, now: Date) {
  await trx
    .updateTable('automation_enrollments')
    .set({
      next_schedule_id: to?.id ?? null,
      due_at: to ? isoPlusSeconds(engineOf(trx), sql.ref('step_base_at'), waitMs(to) / 1000) : null,
      updated_at: isoMicros(now),
    })
    .where('automation_id', '=', automationId)
    .where('state', '=', 'active')
    .where('next_schedule_id', from === null ? 'is' : '=', from)
    .execute();
}

/**
 * Called by schedule create, in its transaction, after the row was inserted: the enrollments that
 * had every earlier email wait for it, its wait counted from their last step.
 */
export async function scheduleAdded(trx: Db, schedule: AutomationScheduleRow, now: Date): Promise<void> {
  await lockAutomation(trx, schedule.automation_id);
  await repoint(trx, schedule.automation_id, null, schedule, now);
}

/**
 * Called by schedule delete, in its transaction, before the row is deleted: the enrollments
 * waiting for it wait for the next email instead, and its unsent messages are cancelled.
 */
export async function scheduleRemoved(trx: Db, schedule: AutomationScheduleRow, now: Date): Promise<void> {
  await lockAutomation(trx, schedule.automation_id);
  const next = await trx
    .selectFrom('automation_schedules')
    .selectAll()
    .where('automation_id', '=', schedule.automation_id)
    .where('id', '>', schedule.id)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  await repoint(trx, schedule.automation_id, schedule.id, next, now);
  await moveMessages(
    trx,
    { automation_schedule_id: schedule.id },
    { from: ['queued', 'held'], to: 'cancelled', now, lastError: 'the automation email was deleted' },
  );
}

/** Live automations with the earliest due time of their enrollments (null: nothing waits). */
async function liveAutomations(db: Db): Promise<Array<{ id: number; next_due: string | null }>> {
  return db
    .selectFrom('automations as a')
    .select([
      'a.id',
      (eb) =>
        eb
          .selectFrom('automation_enrollments as e')
          .select((e) => e.fn.min('e.due_at').as('d'))
          .whereRef('e.automation_id', '=', 'a.id')
          .where('e.state', '=', 'active')
          .where('e.due_at', 'is not', null)
          .as('next_due'),
    ])
    .where('a.status', '=', 1)
    .where('a.deleted_at', 'is', null)
    .execute() as Promise<Array<{ id: number; next_due: string | null }>>;
}

/** Why each of the enrollments `ids` must leave the automation now; those absent stay. */
async function leaving(trx: Db, a: AutomationRow, ids: number[]): Promise<Map<number, string>> {
  const member =
    a.automation_for_table === 'segments'
      ? sql`exists (
          select 1 from segment_recipients r join segments s on s.id = r.segment_id
          where r.segment_id = ${a.automation_for} and s.deleted_at is null
            and (r.contact_id = e.contact_id or (e.contact_id is null and r.contact_id is null and r.email_key = e.email_key)))`
      : sql`exists (
          select 1 from contacts c
          where c.id = e.contact_id and c.user_id = ${a.user_id} and c.contact_type_id = ${a.automation_for} and c.deleted_at is null)`;
  const { rows } = await sql<{ id: number; reason: string | null }>`
    select e.id, case
      when ${suppressedSql(a.user_id, a.unsubscribe_group_id, sql.ref('e.email_key'))} then 'unsubscribed or bounced'
      when e.contact_id is not null and not exists (select 1 from contacts c where c.id = e.contact_id and c.deleted_at is null)
        then 'the contact was deleted'
      when ${a.exit_criteria} = 1 and not ${member} then 'left the target'
    end as reason
    from automation_enrollments e
    where e.id in (${sql.join(ids)})`.execute(trx);
  return new Map(rows.filter((r) => r.reason !== null).map((r) => [Number(r.id), r.reason!]));
}

/**
 * Steps one batch of the automation's due enrollments in one transaction (see the file comment).
 * Returns how many enrollments it took (0: none due, or the automation is no longer live).
 */
async function stepBatch(deps: AppDeps, automationId: number, now: Date): Promise<number> {
  const at = isoMicros(now);
  /** What the step did, for its log line once committed: messages queued per email, exits per reason. */
  const queued: Record<number, number> = {};
  const exited: Record<string, number> = {};
  let utr = '';
  const stepped = await deps.database.db.transaction().execute(async (trx) => {
    const engine = engineOf(trx);
    const a = await trx
      .selectFrom('automations')
      .selectAll()
      .where('id', '=', automationId)
      .where('status', '=', 1)
      .where('deleted_at', 'is', null)
      .$if(engine === 'postgres', (q) => q.forNoKeyUpdate())
      .executeTakeFirst();
    if (!a) return 0;
    utr = a.utr;
    const due = await trx
      .selectFrom('automation_enrollments')
      .select(['id', 'next_schedule_id'])
      .where('automation_id', '=', a.id)
      .where('state', '=', 'active')
      .where('due_at', '<=', at)
      .orderBy('due_at')
      .orderBy('id')
      .limit(STEP_BATCH)
      .execute();
    if (due.length === 0) return 0;
    const exits = await leaving(
      trx,
      a,
      due.map((d) => d.id),
    );
    for (const reason of new Set(exits.values())) {
      const ids = [...exits].filter(([, r]) => r === reason).map(([id]) => id);
      exited[reason] = ids.length;
      await trx
        .updateTable('automation_enrollments')
        .set({ state: 'exited', exit_reason: reason, due_at: null, updated_at: at })
        .where('id', 'in', ids)
        .execute();
    }
    const schedules = await trx.selectFrom('automation_schedules').selectAll().where('automation_id', '=', a.id).orderBy('id').execute();
    const staying = due.filter((d) => !exits.has(d.id));
    let triggered = 0;
    for (const scheduleId of new Set(staying.map((d) => d.next_schedule_id))) {
      const ids = staying.filter((d) => d.next_schedule_id === scheduleId).map((d) => Number(d.id));
      const email = schedules.find((s) => s.id === scheduleId);
      // The email a row waited for is gone only if it was deleted without re-pointing: skip it.
      const next = schedules.find((s) => s.id > (scheduleId ?? Infinity));
      if (email) {
        queued[email.id] = await enqueueSelected(trx, {
          source: ['automation_id', 'automation_schedule_id'],
          select: sql`
            select user_id, cast(${KIND} as text), automation_id, cast(${email.id} as integer), contact_id, email, email_key, payload,
              cast(${at} as text), cast(${at} as text), cast(${at} as text)
            from automation_enrollments where id in (${sql.join(ids)})`,
        });
        triggered += queued[email.id];
      }
      await trx
        .updateTable('automation_enrollments')
        .set({
          last_schedule_id: email?.id ?? null,
          next_schedule_id: next?.id ?? null,
          step_base_at: at,
          due_at: next ? isoMicros(new Date(now.getTime() + waitMs(next))) : null,
          updated_at: at,
        })
        .where('id', 'in', ids)
        .execute();
    }
    if (triggered > 0) {
      await trx
        .updateTable('automations')
        .set((eb) => ({ total_triggered: eb('total_triggered', '+', triggered) }))
        .where('id', '=', a.id)
        .execute();
      await wakeWorkers(trx);
    }
    return due.length;
  });
  if (stepped > 0) deps.log.info({ automation: utr, stepped, queued, exited }, 'automation step: emails queued');
  return stepped;
}

/** Steps every due enrollment of every live automation. Returns how many enrollments were stepped. */
async function stepDueAutomations(deps: AppDeps, now: Date): Promise<number> {
  const at = isoMicros(now);
  let stepped = 0;
  for (const a of await liveAutomations(deps.database.db)) {
    if (a.next_due === null || a.next_due > at) continue;
    for (;;) {
      const n = await stepBatch(deps, a.id, now);
      stepped += n;
      if (n < STEP_BATCH) break;
    }
  }
  return stepped;
}

/** When the next step of a live automation comes due, or null. */
async function nextStepDueAt(db: Db): Promise<Date | null> {
  const dues = (await liveAutomations(db)).map((a) => a.next_due).filter((d): d is string => d !== null);
  return dues.length === 0 ? null : new Date(dues.reduce((x, y) => (x < y ? x : y)));
}

/**
 * The automations' share of the queue: steps of live automations that came due and are not queued
 * yet (`due`), and automation messages `queued`, `sending` and `held` (paused). Each count reads a
 * partial index.
 */
async function countAutomationQueue(db: Db, now: Date): Promise<Record<'due' | 'queued' | 'sending' | 'held', number>> {
  const messages = await db
    .selectFrom('mail_messages')
    .select(['state', (eb) => eb.fn.countAll().as('n')])
    .where('kind', '=', automationKind.name)
    .where('state', 'in', ['queued', 'sending', 'held'])
    .groupBy('state')
    .execute();
  const due = await db
    .selectFrom('automation_enrollments as e')
    .innerJoin('automations as a', 'a.id', 'e.automation_id')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('a.status', '=', 1)
    .where('a.deleted_at', 'is', null)
    .where('e.state', '=', 'active')
    .where('e.due_at', '<=', isoMicros(now))
    .executeTakeFirstOrThrow();
  const depth = { due: toCount(due.n), queued: 0, sending: 0, held: 0 };
  for (const r of messages) depth[r.state as 'queued' | 'sending' | 'held'] = toCount(r.n);
  return depth;
}

/**
 * Automation emails as a kind of mail: rendered from the email's design, counted on the
 * automation's row. Stepping the due enrollments into the queue is `automationStepsTask`.
 */
export const automationKind: MailKind = {
  name: KIND,
  render: renderAutomationBatch,
  unsubscribeGroups: automationGroups,
  source: {
    table: 'automations',
    key: 'automation_id',
    counters: {
      delivered: 'total_delivered',
      bounces: 'total_bounces',
      hard_bounces: 'total_hard_bounces',
      soft_bounces: 'total_soft_bounces',
      spam_reports: 'total_spam_reports',
      total_opens: 'total_opens',
      unique_opens: 'total_unique_opens',
      total_clicks: 'total_clicks',
      unique_clicks: 'total_unique_clicks',
      unsubscribes: 'total_unsubscribe',
      machine_opens: 'total_machine_opens',
      unique_human_opens: 'total_unique_human_opens',
      bot_clicks: 'total_bot_clicks',
    },
    group: 'unsubscribe_group_id',
    utr: 'utr',
  },
  depth: {
    help:
      'Automation mail waiting, by state: due (steps of live automations that came due, not yet queued), queued, sending, ' +
      'held (queued mail of paused automations).',
    count: countAutomationQueue,
  },
};

/** Steps the due enrollments of live automations into the queue: due when the next step is. */
export const automationStepsTask: ScheduledTask = {
  name: 'step automations',
  run: stepDueAutomations,
  nextDueAt: (deps) => nextStepDueAt(deps.database.db),
};
