/**
 * The sunset policy's rule: which addresses of an account have gone quiet. An address is inactive
 * when it received at least `min_messages` messages from the account (counted since its
 * suppression was last lifted, if ever), the first of them more than `days` days ago, and no
 * person opened or clicked any message of the account to it within the last `days` days.
 *
 * Received = delivered (state `sent`: accepted and not bounced since), of the account's campaign
 * mail only (single sends and automation emails; test mails and the service's own mail never
 * count). Only people's opens and clicks count: a machine's open or a scanner's click never sets
 * the times read here. Erased addresses (their messages keep a marker, not the address) are never
 * inactive. `sunset.sweep.ts` keeps the suppression list in step with this rule.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/index.js';
import { isoMicros } from '../util/time.js';

/** The kinds of mail that are the account's campaigns: what engagement and the sunset policy count. */
export const CAMPAIGN_KINDS: readonly string[] = ['single_send', 'automation'];

/** An account's sunset policy. */
export interface SunsetSettings {
  sunset_enabled: number;
  sunset_days: number;
  sunset_min_messages: number;
}

/** The policy of an account that never saved one: off, 180 days, 5 messages. */
export const SUNSET_DEFAULTS: SunsetSettings = { sunset_enabled: 0, sunset_days: 180, sunset_min_messages: 5 };

/** The ranges the policy's values must lie in. */
export const SUNSET_RANGES = {
  sunset_days: { minimum: 30, maximum: 1095 },
  sunset_min_messages: { minimum: 1, maximum: 100 },
} as const;

/** How many addresses the preview names. */
export const PREVIEW_SAMPLE = 20;

const DAY_MS = 86_400_000;

/** The account's sunset policy (the defaults when it never saved one). */
export async function readSunsetSettings(db: Db, userId: number): Promise<SunsetSettings> {
  const row = await db
    .selectFrom('account_settings')
    .select(['sunset_enabled', 'sunset_days', 'sunset_min_messages'])
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row
    ? {
        sunset_enabled: Number(row.sunset_enabled),
        sunset_days: Number(row.sunset_days),
        sunset_min_messages: Number(row.sunset_min_messages),
      }
    : { ...SUNSET_DEFAULTS };
}

/**
 * The account's inactive addresses under `days` and `minMessages` at `now`, as a query of rows
 * (`email_key`, `email`: the address as written on its messages): one pass over the account's
 * campaign messages, grouped by address (index `mail_messages_user_email`).
 */
export function inactiveAddressesSql(
  userId: number,
  days: number,
  minMessages: number,
  now: Date,
): RawBuilder<{ email_key: string; email: string }> {
  const cutoff = isoMicros(new Date(now.getTime() - days * DAY_MS));
  const kinds = sql.join(CAMPAIGN_KINDS.map((k) => sql.lit(k)));
  const counted = sql`m.state = 'sent' and m.sunset_lifted = 0`;
  return sql<{ email_key: string; email: string }>`
    select m.email_key as email_key, max(m.email) as email
    from mail_messages m
    where m.user_id = ${userId} and m.kind in (${kinds}) and m.email_key not like 'erased:%'
    group by m.email_key
    having sum(case when ${counted} then 1 else 0 end) >= ${minMessages}
      and min(case when ${counted} then m.sent_at end) < ${cutoff}
      and coalesce(max(m.last_human_opened_at), '') < ${cutoff}
      and coalesce(max(m.last_human_clicked_at), '') < ${cutoff}`;
}

/**
 * What the policy with `days` and `minMessages` would list now, whether or not it is on: how many
 * addresses, and the first PREVIEW_SAMPLE of them in address order. Addresses already suppressed
 * for another reason (a bounce, a complaint) are not counted: they stay listed under that reason.
 */
export async function previewSunset(
  db: Db,
  userId: number,
  days: number,
  minMessages: number,
  now: Date,
): Promise<{ count: number; sample: string[] }> {
  const { rows } = await sql<{ email_key: string; email: string; n: number | string }>`
    with inactive as (${inactiveAddressesSql(userId, days, minMessages, now)}),
    listed as (
      select i.email_key, i.email from inactive i
      where not exists (
        select 1 from suppressions s where s.user_id = ${userId} and s.email_key = i.email_key and s.reason <> 'inactive')
    )
    select l.email_key, l.email, (select count(*) from listed) as n
    from listed l order by l.email_key limit ${PREVIEW_SAMPLE}`.execute(db);
  return { count: Number(rows[0]?.n ?? 0), sample: rows.map((r) => r.email) };
}
