/**
 * Who a campaign's targets name, as SQL the database runs in one statement: the members of
 * contact types and segments. Shared by single sends (resolved when a send starts) and
 * automations (enrolled as contacts join, checked at each step), so both mail exactly the same
 * people; the suppression they obey is `suppressedSql` of src/suppression/.
 */
import { sql, type RawBuilder } from 'kysely';
import { jsonObjectText, type Engine } from '../db/dialect.js';

/** A target as stored and returned: `contacts_5` → `{id:'5', table:'contacts'}`. */
export interface RecipientRef {
  id: string;
  table: 'contacts' | 'segments';
}

/** A stored target list (JSON text) → its refs; anything malformed counts as no target. */
export function refsOf(text: string): RecipientRef[] {
  try {
    const v = JSON.parse(text);
    return Array.isArray(v) ? v.filter((r) => r && (r.table === 'contacts' || r.table === 'segments') && /^\d+$/.test(String(r.id))) : [];
  } catch {
    return [];
  }
}

/** `column in (ids)`, or false for no ids (a branch of the union that selects nothing). */
export function inList(column: string, ids: readonly number[]): RawBuilder<unknown> {
  return ids.length === 0 ? sql`1 = 0` : sql`${sql.ref(column)} in (${sql.join(ids)})`;
}

/**
 * Every address the refs target, one row per membership (`contact_id`, `email`, `email_key`,
 * `payload`, `hand_id`): `contacts_<type>` gives the type's live contacts; `segments_<id>` the live
 * segment's members, matched contacts (if not deleted) and hand-added recipients (contact_id null,
 * their names kept as the payload). `hand_id` orders the hand-added ones when an address appears
 * twice.
 */
export function targets(engine: Engine, userId: number, refs: readonly RecipientRef[]): RawBuilder<unknown> {
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
 * Each address once, out of `targets` rows (as `t`): a contact's data before a hand-added
 * recipient's, and of several contacts the oldest (lowest id). Rows with `rn = 1` are the picks.
 */
export const pickOncePerAddress = sql`row_number() over (
  partition by t.email_key
  order by case when t.contact_id is null then 1 else 0 end, t.contact_id, t.hand_id
)`;
