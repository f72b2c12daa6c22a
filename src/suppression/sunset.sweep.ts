/**
 * Keeps the account's suppression list in step with its sunset policy: the addresses the rule
 * (`sunset.rule.ts`) finds inactive are listed with reason `inactive`, and those it no longer finds
 * (a person opened an old message, the policy changed or was switched off) leave the list. Every
 * read of the list (resolving recipients, the batch check before rendering, `GET /suppressions`)
 * then honours the policy, with no second rule beside it.
 *
 * A sweep runs when the policy is saved, when a single send starts (for its account), and at least
 * hourly for every account whose policy is on (`sunsetSweepTask`, src/modules/suppressions).
 */
import { sql } from 'kysely';
import type { Db } from '../db/index.js';
import { engineOf } from '../db/dialect.js';
import { isoMicros } from '../util/time.js';
import { inactiveAddressesSql, readSunsetSettings } from './sunset.rule.js';

/** How often an account's inactive addresses are brought up to date while its policy is on. */
export const SWEEP_EVERY_MS = 60 * 60 * 1000;

/**
 * Serialises the sweeps and lifts of one account (PostgreSQL: a transaction-scoped advisory lock;
 * SQLite has one writer), so a sweep computed before a lift never lists the lifted address again.
 */
export async function lockSunset(db: Db, userId: number): Promise<void> {
  if (engineOf(db) === 'postgres') await sql`select pg_advisory_xact_lock(25, ${userId}::int)`.execute(db);
}

/** The detail an inactive entry carries. */
function detailOf(days: number): string {
  return `No open or click by a person in the last ${days} days (sunset policy).`;
}

/**
 * Brings the account's `inactive` entries up to date at `now`, in the caller's transaction: with
 * the policy off they all go; with it on, entries the rule no longer finds go and the addresses it
 * finds that are not on the list yet join it (an address already suppressed for another reason
 * keeps that reason). Records when it ran. Returns how many entries joined and left.
 */
export async function sweepSunset(trx: Db, userId: number, now: Date): Promise<{ added: number; removed: number }> {
  await lockSunset(trx, userId);
  const settings = await readSunsetSettings(trx, userId);
  const at = isoMicros(now);
  const stale = trx.deleteFrom('suppressions').where('user_id', '=', userId).where('reason', '=', 'inactive');
  if (!settings.sunset_enabled) {
    const gone = await stale.executeTakeFirst();
    return { added: 0, removed: Number(gone.numDeletedRows) };
  }
  const inactive = () => inactiveAddressesSql(userId, settings.sunset_days, settings.sunset_min_messages, now);
  const gone = await stale.where('email_key', 'not in', sql<string>`(select i.email_key from (${inactive()}) i)`).executeTakeFirst();
  const added = await sql`
    insert into suppressions (user_id, email_key, email, reason, detail, created_at)
    select cast(${userId} as integer), i.email_key, i.email, 'inactive', cast(${detailOf(settings.sunset_days)} as text), cast(${at} as text)
    from (${inactive()}) i
    where true
    on conflict (user_id, email_key) do nothing`.execute(trx);
  await trx.updateTable('account_settings').set({ sunset_swept_at: at }).where('user_id', '=', userId).execute();
  return { added: Number(added.numAffectedRows ?? 0), removed: Number(gone.numDeletedRows) };
}
