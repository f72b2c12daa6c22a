/**
 * Who a single send goes to, decided in the database in one statement when the send starts: the
 * queue gets one row per address, and the list is never held in memory.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/index.js';
import { engineOf, jsonObjectText, type Engine } from '../../db/dialect.js';
import { isoMicros } from '../../util/time.js';
import type { RecipientRef } from './single-sends.rules.js';
import type { SingleSendRow } from './single-sends.schema.js';

/** A stored recipient list (JSON text) → its refs; anything malformed counts as no target. */
export function refsOf(text: string): RecipientRef[] {
  try {
    const v = JSON.parse(text);
    return Array.isArray(v) ? v.filter((r) => r && (r.table === 'contacts' || r.table === 'segments') && /^\d+$/.test(String(r.id))) : [];
  } catch {
    return [];
  }
}

/** `column in (ids)`, or false for no ids (a branch of the union that selects nothing). */
function inList(column: string, ids: number[]): RawBuilder<unknown> {
  return ids.length === 0 ? sql`1 = 0` : sql`${sql.ref(column)} in (${sql.join(ids)})`;
}

/**
 * Every address the refs target, one row per membership: `contacts_<type>` gives the type's live
 * contacts; `segments_<id>` the live segment's members, matched contacts (if not deleted) and
 * hand-added recipients (contact_id null, their names kept as the payload). `hand_id` orders the
 * hand-added ones when an address appears twice.
 */
function targets(engine: Engine, userId: number, refs: RecipientRef[]): RawBuilder<unknown> {
  const typeIds = refs.filter((r) => r.table === 'contacts').map((r) => Number(r.id));
  const segmentIds = refs.filter((r) => r.table === 'segments').map((r) => Number(r.id));
  const names = jsonObjectText(engine, [
    ['first_name', sql`r.first_name`],
    ['last_name', sql`r.last_name`],
  ]);
  return sql`
    select c.id as contact_id, c.email as email, c.email_key as email_key, cast(null as text) as payload, cast(0 as integer) as hand_id
    from contacts c
    where c.user_id = ${userId} and c.deleted_at is null and ${inList('c.contact_type_id', typeIds)}
    union all
    select r.contact_id, coalesce(c.email, r.email), coalesce(c.email_key, r.email_key),
      case when r.contact_id is null then ${names} end, r.id
    from segment_recipients r
    join segments s on s.id = r.segment_id
    left join contacts c on c.id = r.contact_id
    where r.user_id = ${userId} and s.user_id = ${userId} and s.deleted_at is null and ${inList('r.segment_id', segmentIds)}
      and (r.contact_id is null or c.deleted_at is null)`;
}

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
  const engine = engineOf(trx);
  const userId = send.user_id;
  const at = isoMicros(now);
  const result = await sql`
    with targets as (${targets(engine, userId, refsOf(send.recipient_id))}),
    excluded as (${targets(engine, userId, refsOf(send.exclude_specific_recipient_id))}),
    picked as (
      select t.contact_id, t.email, t.email_key, t.payload,
        row_number() over (
          partition by t.email_key
          order by case when t.contact_id is null then 1 else 0 end, t.contact_id, t.hand_id
        ) as rn
      from targets t
      where t.email_key is not null
        and not exists (select 1 from excluded x where x.email_key = t.email_key)
        and not exists (
          select 1 from unsubscribers u
          where u.user_id = ${userId} and u.email_key = t.email_key
            and (u.unsubscribe_groups_id is null or u.unsubscribe_groups_id = ${send.unsubscribe_group_id})
        )
        and not exists (select 1 from bounced_addresses b where b.user_id = ${userId} and b.email_key = t.email_key)
    )
    insert into mail_messages (user_id, kind, single_send_id, contact_id, email, email_key, payload, next_attempt_at, created_at, updated_at)
    select cast(${userId} as integer), 'single_send', cast(${send.id} as integer), contact_id, email, email_key, payload,
      cast(${at} as text), cast(${at} as text), cast(${at} as text)
    from picked where rn = 1
    on conflict do nothing`.execute(trx);
  return Number(result.numAffectedRows ?? 0);
}
