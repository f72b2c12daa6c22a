/**
 * Who a single send goes to, decided in the database in one statement when the send starts: the
 * queue gets one row per address, and the list is never held in memory.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import { engineOf, type Engine } from '../../db/dialect.js';
import { pickOncePerAddress, refsOf, targets } from '../../delivery/audience.js';
import { suppressedSql } from '../../suppression/suppression.reads.js';
import { enqueueSelected } from '../../messages/messages.writes.js';
import { isoMicros } from '../../util/time.js';
import type { SingleSendRow } from './single-sends.schema.js';

/**
 * Queues one message per recipient of a send that is starting, in the caller's transaction, with
 * one `INSERT … SELECT`: the union of the targets, minus the addresses of the excluded targets,
 * the account's global unsubscribes, the send's group unsubscribes and the account's hard-bounced
 * addresses (deleted contacts are never targets). Each address goes once, compared
 * case-insensitively: when several memberships share it, a contact's data personalises it before a
 * hand-added recipient's, and of several contacts the oldest (lowest id). The unique index
 * (single_send_id, email_key) keeps that true even if resolution ran twice. Returns how many
 * messages were queued.
 */
export async function resolveRecipients(trx: Db, send: SingleSendRow, now: Date): Promise<number> {
  const userId = send.user_id;
  const at = isoMicros(now);
  return enqueueSelected(trx, {
    with: pickedRecipients(engineOf(trx), send),
    source: ['single_send_id'],
    select: sql`
      select cast(${userId} as integer), 'single_send', cast(${send.id} as integer), contact_id, email, email_key, payload,
        cast(${at} as text), cast(${at} as text), cast(${at} as text)
      from picked where rn = 1`,
  });
}

/**
 * Queues the test share of an A/B test that is starting, in the caller's transaction, with one
 * `INSERT … SELECT` over the same recipients `resolveRecipients` would queue: they are put in a
 * random order (the database's `random()`), the first `round(n × percent / 100)` of them (at
 * least one per variant, at most all) are the test share, and the k-th of those gets variant
 * `k mod variants`, so every variant's share is within one of the others'. Returns how many
 * messages were queued. The rest of the recipients are queued when the winner is chosen
 * (`resolveRecipients` then, whose unique index leaves out those already in the test).
 */
export async function resolveTestShare(trx: Db, send: SingleSendRow, variants: number, now: Date): Promise<number> {
  const userId = send.user_id;
  const at = isoMicros(now);
  const percent = sql`cast(${send.ab_test_percent ?? 0} as integer)`;
  const count = sql`cast(${variants} as integer)`;
  return enqueueSelected(trx, {
    with: sql`
      ${pickedRecipients(engineOf(trx), send)},
      shuffled as (
        select contact_id, email, email_key, payload, row_number() over (order by random()) as k, count(*) over () as n
        from picked where rn = 1
      )`,
    source: ['single_send_id'],
    extra: ['ab_variant'],
    select: sql`
      select cast(${userId} as integer), 'single_send', cast(${send.id} as integer), contact_id, email, email_key, payload,
        cast((k - 1) % ${count} as integer), cast(${at} as text), cast(${at} as text), cast(${at} as text)
      from shuffled
      where k <= case when (n * ${percent} + 50) / 100 < ${count} then ${count} else (n * ${percent} + 50) / 100 end`,
  });
}

/** What decides a send's audience: its targets, exclusions and unsubscribe group. */
export type Audience = Pick<SingleSendRow, 'user_id' | 'recipient_id' | 'exclude_specific_recipient_id' | 'unsubscribe_group_id'>;

/**
 * The `with` clause both the start of a send and the recipient count use, so they can never
 * disagree: `picked` holds every candidate row, and those with `rn = 1` are the recipients.
 */
function pickedRecipients(engine: Engine, send: Audience) {
  const userId = send.user_id;
  return sql`
    with targets as (${targets(engine, userId, refsOf(send.recipient_id))}),
    excluded as (${targets(engine, userId, refsOf(send.exclude_specific_recipient_id))}),
    picked as (
      select t.contact_id, t.email, t.email_key, t.payload, ${pickOncePerAddress} as rn
      from targets t
      where t.email_key is not null
        and not exists (select 1 from excluded x where x.email_key = t.email_key)
        and not ${suppressedSql(userId, send.unsubscribe_group_id, sql.ref('t.email_key'))}
    )`;
}

/**
 * How many addresses the send would go to if it started now: the very selection
 * `resolveRecipients` queues, counted instead of inserted.
 */
export async function countRecipients(db: Db, send: Audience): Promise<number> {
  const result = await sql<{ n: number | string }>`
    ${pickedRecipients(engineOf(db), send)}
    select count(*) as n from picked where rn = 1`.execute(db);
  return Number(result.rows[0]?.n ?? 0);
}
