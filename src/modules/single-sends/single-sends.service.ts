import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/index.js';
import { queryListSource } from '../../http/list-source.js';
import { singleSendKind } from './single-sends.engine.js';
import { countersOf, statisticsOf } from '../../delivery/statistics.js';
import { trackingLinks } from '../../delivery/tracking.js';
import { Conflict, NotFound, Rnf, ValidationError, type FieldErrors } from '../../http/errors.js';
import { messages, Rules } from '../../http/messages.js';
import { utrOf } from '../../http/schemas.js';
import { wakeWorkers } from '../../messages/mail.queue.js';
import { isoMicros } from '../../util/time.js';
import {
  cancelQueuedMessages,
  findSendsByUtr,
  findSingleSend,
  insertSingleSend,
  selectOpenedMessages,
  selectSingleSends,
  softDeleteSends,
  STATUS,
  updateSendIfStatus,
} from './single-sends.queries.js';
import { countRecipients } from './recipients.js';
import { checkSingleSend } from './single-sends.rules.js';
import { copyVariants, countVariants, insertVariants, replaceVariants, selectVariants } from './ab-tests.queries.js';
import { renumberVariants } from './ab-tests.schema.js';
import { chooseWinner, testFigures } from './ab-tests.engine.js';
import { toSingleSend, type SingleSendInput, type SingleSendRow } from './single-sends.schema.js';

/** Maps a batch of sends, with one query for the open tokens of all of them and one for their A/B tests' variants. */
async function mapSends(deps: AppDeps, rows: SingleSendRow[]) {
  if (rows.length === 0) return [];
  const { db } = deps.database;
  const links = trackingLinks(deps.config);
  const tokens = new Map<number, Record<string, string>>(rows.map((r) => [r.id, {}]));
  for (const m of await selectOpenedMessages(
    db,
    rows.map((r) => r.id),
  )) {
    tokens.get(m.single_send_id!)![m.email] = links.openToken(m.id);
  }
  const variants = await selectVariants(
    db,
    rows.filter((r) => Number(r.ab_test) === 1).map((r) => r.id),
  );
  return rows.map((r) =>
    toSingleSend(
      r,
      tokens.get(r.id),
      variants.filter((v) => v.single_send_id === r.id),
    ),
  );
}

/** The list source of the account's single sends. */
export function listSingleSends(deps: AppDeps, userId: number) {
  return queryListSource(
    () => selectSingleSends(deps.database.db, userId),
    'id',
    (rows: SingleSendRow[]) => mapSends(deps, rows),
  );
}

async function requireSend(db: Db, userId: number, rawUtr: unknown): Promise<SingleSendRow> {
  const utr = utrOf(rawUtr);
  const row = utr ? await findSingleSend(db, userId, utr) : undefined;
  if (!row) throw new NotFound(Rnf);
  return row;
}

/** One send (details). */
export async function getSingleSend(deps: AppDeps, userId: number, rawUtr: unknown) {
  const [send] = await mapSends(deps, [await requireSend(deps.database.db, userId, rawUtr)]);
  return send;
}

/**
 * A send's detailed statistics, with its A/B test's variants (`Record not found` when it is not
 * the account's).
 */
export async function getSingleSendStats(deps: AppDeps, userId: number, rawUtr: unknown) {
  const { db } = deps.database;
  const row = await requireSend(db, userId, rawUtr);
  const [stats, figures] = await Promise.all([
    statisticsOf(db, { table: 'single_sends', id: row.id }, countersOf(row, singleSendKind.source!.counters, Number(row.triggered))),
    testFigures(db, row),
  ]);
  const winner = row.ab_winner === null ? null : Number(row.ab_winner);
  return { ...stats, variants: figures.map((f) => ({ ...f, winner: f.index === winner })) };
}

/** The status a create or update saves: a draft (0) with `draft` 1, else ready (1). */
function savedStatus(input: SingleSendInput): number {
  return input.draft === 1 ? STATUS.initiate : STATUS.ready;
}

/**
 * Saves a new send, ready to go (status 1) at once or at its schedule, or as a draft (status 0)
 * with `draft` 1; returns its utr.
 */
export async function createSingleSend(
  deps: AppDeps,
  userId: number,
  input: SingleSendInput,
  schemaFailures: FieldErrors,
): Promise<string> {
  const now = deps.clock.now();
  const { columns, variants } = await checkSingleSend(deps, userId, input, new Rules(renumberVariants(schemaFailures)), now);
  const utr = randomUUID();
  await deps.database.db.transaction().execute(async (trx) => {
    const at = isoMicros(now);
    const id = await insertSingleSend(trx, {
      user_id: userId,
      utr,
      ...columns,
      status: savedStatus(input),
      created_at: at,
      updated_at: at,
    });
    await insertVariants(trx, { ...columns, user_id: userId, id }, variants);
    await wakeWorkers(trx);
  });
  return utr;
}

/** Why a send cannot change any more. */
function conflictText(status: number): string {
  return status === STATUS.running
    ? 'The single send is running and can no longer be updated; delete it to cancel what is left.'
    : 'The single send is completed and can no longer be updated; duplicate it to send it again.';
}

/**
 * Replaces a draft or ready send's parameters and makes it ready (status 1) for its new time, or
 * a draft (status 0) with `draft` 1; a running or completed send answers 409.
 */
export async function updateSingleSend(
  deps: AppDeps,
  userId: number,
  input: SingleSendInput & { utr: string },
  schemaFailures: FieldErrors,
): Promise<string> {
  const { db } = deps.database;
  const rules = new Rules(renumberVariants(schemaFailures));
  const row = rules.failed('utr') ? undefined : await findSingleSend(db, userId, input.utr?.trim() ?? '');
  if (!row && !rules.failed('utr')) throw new NotFound(Rnf);
  if (row && row.status >= STATUS.running) throw new Conflict(conflictText(row.status));
  const now = deps.clock.now();
  const { columns, variants } = await checkSingleSend(deps, userId, input, rules, now);
  await db.transaction().execute(async (trx) => {
    // The status condition closes the gap between the check above and this write: a worker may
    // have started the send meanwhile.
    if (
      !(await updateSendIfStatus(trx, userId, row!.id, [STATUS.initiate, STATUS.ready], { ...columns, status: savedStatus(input) }, now))
    ) {
      const current = await findSingleSend(trx, userId, row!.utr);
      if (!current) throw new NotFound(Rnf);
      throw new Conflict(conflictText(current.status));
    }
    await replaceVariants(trx, { ...columns, user_id: userId, id: row!.id }, variants);
    await wakeWorkers(trx);
  });
  return row!.utr;
}

/**
 * How many addresses a send of the account would go to if it started now, from the segments'
 * members as stored (`Record not found` when not the account's). A read changes nothing: a segment
 * with engagement conditions counts the members of its last recomputation, and the send recomputes
 * it when it starts.
 */
export async function countSingleSendRecipients(deps: AppDeps, userId: number, rawUtr: unknown): Promise<number> {
  const { db } = deps.database;
  return countRecipients(db, await requireSend(db, userId, rawUtr));
}

/** Copies a send (its A/B test too) as a draft (status 0) named `<name> (copy)`, with a fresh utr and no statistics. */
export async function duplicateSingleSend(deps: AppDeps, userId: number, rawUtr: unknown): Promise<{ id: number; utr: string }> {
  const { db } = deps.database;
  const row = await requireSend(db, userId, rawUtr);
  const at = isoMicros(deps.clock.now());
  const utr = randomUUID();
  return db.transaction().execute(async (trx) => {
    const id = await insertSingleSend(trx, {
      user_id: userId,
      utr,
      template_id: row.template_id,
      template_json: row.template_json,
      template_html: row.template_html,
      recipient_id: row.recipient_id,
      exclude_specific_recipient_id: row.exclude_specific_recipient_id,
      sender_id: row.sender_id,
      unsubscribe_group_id: row.unsubscribe_group_id,
      single_send_name: `${row.single_send_name} (copy)`,
      from_sender: row.from_sender,
      reply_to: row.reply_to,
      sender_name: row.sender_name,
      sender_address: row.sender_address,
      subject: row.subject,
      preheader: row.preheader,
      track_clicks: row.track_clicks,
      ab_test: row.ab_test,
      ab_test_percent: row.ab_test_percent,
      ab_winner_metric: row.ab_winner_metric,
      ab_wait_minutes: row.ab_wait_minutes,
      schedule_type: row.schedule_type,
      schedule_date: row.schedule_date,
      schedule_time: row.schedule_time,
      timezone: row.timezone,
      due_at: null,
      status: STATUS.initiate,
      sent_at: null,
      created_at: at,
      updated_at: at,
    });
    await copyVariants(trx, row.id, id);
    return { id, utr };
  });
}

/**
 * Soft-deletes sends by utr (a draft, a ready one: it will never start). A running send is
 * cancelled: the messages still queued are not sent. Throws Rnf when none of them is the account's.
 */
export async function deleteSingleSends(deps: AppDeps, userId: number, rawUtrs: unknown[]): Promise<number> {
  const utrs = [...new Set(rawUtrs.map(utrOf).filter((u): u is string => u !== null))];
  if (utrs.length === 0) throw new NotFound(Rnf);
  return deps.database.db.transaction().execute(async (trx) => {
    const rows = await findSendsByUtr(trx, userId, utrs);
    const n = await softDeleteSends(
      trx,
      userId,
      rows.map((r) => r.id),
      deps.clock.now(),
    );
    if (n === 0) throw new NotFound(Rnf);
    await cancelQueuedMessages(
      trx,
      rows.filter((r) => r.status === STATUS.running).map((r) => r.id),
      deps.clock.now(),
    );
    return n;
  });
}

/**
 * Picks an A/B test's winner by hand while it waits (from its start until a winner is chosen):
 * the winner's mail goes to the rest of the recipients at once. 404 when the send is not the
 * account's; 409 when it has no test, has not started, or its winner was already chosen; 422 when
 * the variant is not one of its test's.
 */
export async function pickAbWinner(
  deps: AppDeps,
  userId: number,
  input: { utr: string; variant: number },
): Promise<{ utr: string; ab_winner: number; queued: number }> {
  const { db } = deps.database;
  const send = await requireSend(db, userId, input.utr);
  if (Number(send.ab_test) !== 1) throw new Conflict('The single send is not an A/B test.');
  if (input.variant >= (await countVariants(db, send.id))) throw new ValidationError({ variant: [messages.invalid('variant')] });
  if (send.status < STATUS.running)
    throw new Conflict('The A/B test has not started yet: its winner can be picked once the send is running, until one is chosen.');
  const chosen = send.ab_winner === null ? await chooseWinner(deps, send.id, input.variant, deps.clock.now()) : null;
  if (!chosen) {
    const now = await findSingleSend(db, userId, send.utr);
    if (!now) throw new NotFound(Rnf);
    throw new Conflict(`The winner of the A/B test was already chosen: variant ${String(now.ab_winner)}.`);
  }
  deps.log.info(
    { singleSend: send.utr, userId, winner: chosen.winner, queued: chosen.queued },
    'single send A/B test: winner picked by hand',
  );
  return { utr: send.utr, ab_winner: chosen.winner, queued: chosen.queued };
}
