/**
 * Engagement conditions of segments: what a contact's address received, opened and clicked.
 *
 * - `engagement` with `opened in the last`, `clicked in the last`, `received in the last` and their
 *   `not …` forms, over a number of days: every message of the account to the address (single
 *   sends and automation emails, never test mails or the service's own mail).
 * - `single_send` with `received`, `opened`, `clicked` and their `not …` forms, over one single
 *   send of the account named by its `utr`.
 *
 * Received = delivered: accepted by the receiving server and not bounced since (state `sent`).
 * Opened = a person opened it or clicked one of its links (a click is an open); clicked = a person
 * clicked one of its links. Machine opens and scanner clicks never count: only the times a person
 * last opened and clicked a message are read. Each `not …` operator is `not exists` of its
 * positive, so the two always split the contact type exactly.
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { messages } from '../../http/messages.js';
import { CAMPAIGN_KINDS } from '../../suppression/sunset.rule.js';
import { isoMicros } from '../../util/time.js';

export const ENGAGEMENT_FIELD = 'engagement';
export const SINGLE_SEND_FIELD = 'single_send';

export const ENGAGEMENT_OPERATORS = [
  'opened in the last',
  'clicked in the last',
  'received in the last',
  'not opened in the last',
  'not clicked in the last',
  'not received in the last',
] as const;

export const SINGLE_SEND_OPERATORS = ['received', 'opened', 'clicked', 'not received', 'not opened', 'not clicked'] as const;

/** The range of an engagement condition's days. */
export const MIN_DAYS = 1;
export const MAX_DAYS = 3650;

const DAY_MS = 86_400_000;

/** The failure of an engagement condition's value (a whole number of days, 1–3650), or null. */
export function daysFailure(key: string, value: string): string | null {
  const text = value.trim();
  if (!/^[-+]?\d+$/.test(text)) return messages.integer(key);
  const n = Number(text);
  if (n < MIN_DAYS) return messages.minNumber(key, MIN_DAYS);
  if (n > MAX_DAYS) return messages.maxNumber(key, MAX_DAYS);
  return null;
}

/** The failure of a `single_send` condition's value whose send is not one of the account's. */
export const INVALID_SEND = 'The selected value is invalid.';

/** What an operator asks of one message (`m`): received, opened (a click counts), or clicked. */
function messageTest(positive: string): RawBuilder<SqlBool> {
  if (positive.startsWith('received')) return sql<SqlBool>`m.state = 'sent'`;
  if (positive.startsWith('clicked')) return sql<SqlBool>`m.last_human_clicked_at is not null`;
  return sql<SqlBool>`(m.last_human_opened_at is not null or m.last_human_clicked_at is not null)`;
}

/** The same test limited to events at or after `cutoff` (ISO text, as every time is stored). */
function messageTestSince(positive: string, cutoff: string): RawBuilder<SqlBool> {
  if (positive.startsWith('received')) return sql<SqlBool>`m.state = 'sent' and m.sent_at >= ${cutoff}`;
  if (positive.startsWith('clicked')) return sql<SqlBool>`m.last_human_clicked_at >= ${cutoff}`;
  return sql<SqlBool>`(m.last_human_opened_at >= ${cutoff} or m.last_human_clicked_at >= ${cutoff})`;
}

/** An operator without its `not `, and whether it had one. */
function split(op: string): { positive: string; negated: boolean } {
  return op.startsWith('not ') ? { positive: op.slice(4), negated: true } : { positive: op, negated: false };
}

/**
 * `engagement` over the contact `c`: one of the account's campaign messages to its address
 * passes the operator's test within the last `days` days before `now` (at most days × 24 hours
 * ago); the `not` form when none does. A value that is not a valid number of days matches nothing.
 */
export function engagementSql(op: string, value: string, now: Date): RawBuilder<SqlBool> {
  if (daysFailure('value', value) !== null) return sql<SqlBool>`1 = 0`;
  const { positive, negated } = split(op);
  const cutoff = isoMicros(new Date(now.getTime() - Number(value.trim()) * DAY_MS));
  const kinds = sql.join(CAMPAIGN_KINDS.map((k) => sql.lit(k)));
  const found = sql<SqlBool>`exists (
    select 1 from mail_messages m
    where m.user_id = c.user_id and m.email_key = c.email_key and m.kind in (${kinds}) and ${messageTestSince(positive, cutoff)})`;
  return negated ? sql<SqlBool>`not ${found}` : found;
}

/**
 * `single_send` over the contact `c`: the send named by `utr` (of the contact's account, deleted
 * or not: its messages stay what they were) has a message to the contact's address that passes
 * the operator's test; the `not` form when it has none (never sent to the address included).
 */
export function singleSendSql(op: string, utr: string): RawBuilder<SqlBool> {
  const { positive, negated } = split(op);
  const found = sql<SqlBool>`exists (
    select 1 from mail_messages m
    where m.single_send_id = (select s.id from single_sends s where s.user_id = c.user_id and s.utr = ${utr.trim()})
      and m.email_key = c.email_key and ${messageTest(positive)})`;
  return negated ? sql<SqlBool>`not ${found}` : found;
}

/** Whether any of a stored segment's fields makes its membership change with time or engagement. */
export function dependsOnEngagement(fields: readonly string[]): boolean {
  return fields.some((f) => f === ENGAGEMENT_FIELD || f === SINGLE_SEND_FIELD);
}
