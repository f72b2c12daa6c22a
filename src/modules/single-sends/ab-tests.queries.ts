import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import { isoMicros } from '../../util/time.js';
import type { VariantValues } from './ab-tests.rules.js';
import type { VariantRow } from './ab-tests.schema.js';
import { STATUS } from './single-sends.queries.js';

/** Saves a send's variants 1…4 (none: nothing), with the sender's name and address its links' placeholders read. */
export async function insertVariants(
  db: Db,
  send: { user_id: number; id: number; sender_name: string | null; sender_address: string | null },
  variants: readonly VariantValues[],
): Promise<void> {
  if (variants.length === 0) return;
  await db
    .insertInto('single_send_variants')
    .values(
      variants.map((v) => ({
        user_id: send.user_id,
        single_send_id: send.id,
        ...v,
        sender_name: send.sender_name,
        sender_address: send.sender_address,
      })),
    )
    .execute();
}

/** Replaces a send's variants (an update of a draft or ready send: none has sent yet). */
export async function replaceVariants(
  db: Db,
  send: { user_id: number; id: number; sender_name: string | null; sender_address: string | null },
  variants: readonly VariantValues[],
): Promise<void> {
  await db.deleteFrom('single_send_variants').where('single_send_id', '=', send.id).execute();
  await insertVariants(db, send, variants);
}

/** What a copy of a variant takes from it (besides the account, and the send it now belongs to). */
const COPIED = [
  'variant',
  'subject',
  'template_id',
  'template_json',
  'template_html',
  'design_id',
  'sender_name',
  'sender_address',
] as const;

/** Copies a send's variants to its copy (a duplicate). */
export async function copyVariants(db: Db, fromId: number, toId: number): Promise<void> {
  await db
    .insertInto('single_send_variants')
    .columns(['user_id', 'single_send_id', ...COPIED])
    .expression((eb) =>
      eb
        .selectFrom('single_send_variants')
        .select(['user_id', sql<number>`cast(${toId} as integer)`.as('single_send_id'), ...COPIED])
        .where('single_send_id', '=', fromId),
    )
    .execute();
}

/** The variants 1…4 of the sends among `sendIds`, in order of send and index. */
export async function selectVariants(db: Db, sendIds: readonly number[]): Promise<VariantRow[]> {
  if (sendIds.length === 0) return [];
  return db
    .selectFrom('single_send_variants')
    .selectAll()
    .where('single_send_id', 'in', [...sendIds])
    .orderBy('single_send_id')
    .orderBy('variant')
    .execute();
}

/** How many variants a send has in all (its own, 0, and its rows). */
export async function countVariants(db: Db, sendId: number): Promise<number> {
  const row = await db
    .selectFrom('single_send_variants')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('single_send_id', '=', sendId)
    .executeTakeFirstOrThrow();
  return 1 + Number(row.n);
}

/** The figures of one variant's test share. */
export interface VariantFigures {
  triggered: number;
  delivered: number;
  unique_human_opens: number;
  unique_clicks: number;
}

/**
 * The figures of each variant's test share (index → figures; a variant with no message is
 * absent), read from its messages: delivered as the send counts it (accepted, not bounced since),
 * a person's open or click as the ledger marks it on the message (`last_human_opened_at`,
 * `first_clicked_at`: machines' opens and scanners' clicks never set them, and a click found to
 * be a scanner's takes them back).
 */
export async function variantFigures(db: Db, sendId: number): Promise<Map<number, VariantFigures>> {
  const rows = await db
    .selectFrom('mail_messages')
    .select([
      'ab_variant',
      (eb) => eb.fn.countAll().as('triggered'),
      sql<number>`sum(case when state = 'sent' and bounce_type is null then 1 else 0 end)`.as('delivered'),
      sql<number>`sum(case when last_human_opened_at is not null then 1 else 0 end)`.as('unique_human_opens'),
      sql<number>`sum(case when first_clicked_at is not null then 1 else 0 end)`.as('unique_clicks'),
    ])
    .where('single_send_id', '=', sendId)
    .where('ab_variant', 'is not', null)
    .groupBy('ab_variant')
    .execute();
  return new Map(
    rows.map((r) => [
      Number(r.ab_variant),
      {
        triggered: Number(r.triggered),
        delivered: Number(r.delivered),
        unique_human_opens: Number(r.unique_human_opens),
        unique_clicks: Number(r.unique_clicks),
      },
    ]),
  );
}

/** Running tests with no winner and not deleted. */
function waitingTests(db: Db) {
  return db
    .selectFrom('single_sends as s')
    .where('s.status', '=', STATUS.running)
    .where('s.ab_test', '=', 1)
    .where('s.ab_winner', 'is', null)
    .where('s.deleted_at', 'is', null);
}

/**
 * Running tests whose test share has been handed to the SMTP server (no message of it is queued
 * or being sent for the first time; one waiting to retry does not hold the wait up) and whose wait
 * has not begun, at most `limit`.
 */
export function selectSharesSent(db: Db, limit: number) {
  return waitingTests(db)
    .select(['s.id', 's.ab_wait_minutes'])
    .where('s.ab_wait_ends_at', 'is', null)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('mail_messages as m')
            .select('m.id')
            .whereRef('m.single_send_id', '=', 's.id')
            .where('m.state', 'in', ['queued', 'sending'])
            .where('m.attempts', '=', 0),
        ),
      ),
    )
    .orderBy('s.id')
    .limit(limit)
    .execute();
}

/** Sets when a test's wait ends, once (returns whether this call set it). */
export async function setWaitEnd(db: Db, id: number, endsAt: Date): Promise<boolean> {
  const res = await db
    .updateTable('single_sends')
    .set({ ab_wait_ends_at: isoMicros(endsAt) })
    .where('id', '=', id)
    .where('ab_wait_ends_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Waiting tests whose wait ended by `now` (oldest first), at most `limit`. */
export function selectWaitsOver(db: Db, now: Date, limit: number) {
  return waitingTests(db)
    .select('s.id')
    .where('s.ab_wait_ends_at', '<=', isoMicros(now))
    .orderBy('s.ab_wait_ends_at')
    .orderBy('s.id')
    .limit(limit)
    .execute();
}

/** When the next wait ends, or null when none is under way. */
export async function nextWaitEndsAt(db: Db): Promise<Date | null> {
  const row = await waitingTests(db)
    .select((eb) => eb.fn.min('s.ab_wait_ends_at').as('at'))
    .executeTakeFirst();
  return row?.at ? new Date(row.at) : null;
}

/**
 * Writes a test's winner, only while the test is waiting for one (running, not deleted, no
 * winner yet; `waitOver`: its wait ended by `now`), and returns the send as it now is; undefined
 * when another process or request chose first. The update takes the row's lock (PostgreSQL), so
 * a concurrent choice waits for this transaction and then finds the winner set.
 */
export async function claimWinner(trx: Db, id: number, winner: number, now: Date, waitOver: boolean) {
  const at = isoMicros(now);
  let q = trx
    .updateTable('single_sends')
    .set({ ab_winner: winner, ab_winner_at: at, updated_at: at })
    .where('id', '=', id)
    .where('status', '=', STATUS.running)
    .where('ab_test', '=', 1)
    .where('ab_winner', 'is', null)
    .where('deleted_at', 'is', null);
  if (waitOver) q = q.where('ab_wait_ends_at', '<=', at);
  const res = await q.executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) return undefined;
  return trx.selectFrom('single_sends').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** Adds the messages queued for the winner's send to the send's `triggered`. */
export async function addTriggered(trx: Db, id: number, n: number): Promise<void> {
  await trx
    .updateTable('single_sends')
    .set((eb) => ({ triggered: eb('triggered', '+', n) }))
    .where('id', '=', id)
    .execute();
}
