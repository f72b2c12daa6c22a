/**
 * Account settings: the sunset policy (`sunset_enabled`, `sunset_days`, `sunset_min_messages`)
 * and whether people must use two-factor authentication (`require_two_factor`, owners only).
 * An account that never saved them has the defaults (off, 180 days, 5 messages). Saving them
 * brings the account's inactive addresses up to date in the same transaction, so the suppression
 * list, and whom the next mail goes to, follow at once.
 */
import type { AppDeps } from '../../deps.js';
import type { Principal } from '../../http/principal.js';
import { allows } from '../../http/scopes.js';
import { AppError } from '../../http/errors.js';
import { isoMicros } from '../../util/time.js';
import { previewSunset, readSunsetSettings, type SunsetSettings } from '../../suppression/sunset.rule.js';
import { sweepSunset } from '../../suppression/sunset.sweep.js';
import { readRequireTwoFactor } from '../access/sessions.queries.js';
import type { Settings, SunsetPreviewInput, UpdateSettingsInput } from './accounts.settings.schema.js';

/** The account's settings (the defaults when it never saved them). */
export async function getSettings(deps: AppDeps, userId: number): Promise<Settings> {
  const { db } = deps.database;
  return { ...(await readSunsetSettings(db, userId)), require_two_factor: await readRequireTwoFactor(db, userId) };
}

/**
 * Saves the settings given (the others keep their values) and sweeps the account's inactive
 * addresses under the new policy: switched on, they are listed; switched off, they leave the list.
 */
export async function updateSettings(deps: AppDeps, principal: Principal, input: UpdateSettingsInput): Promise<void> {
  if (input.require_two_factor !== undefined && !principal.grant.full)
    throw new AppError(403, 'Only an owner can change require_two_factor.');
  const userId = principal.account;
  const now = deps.clock.now();
  const at = isoMicros(now);
  await deps.database.db.transaction().execute(async (trx) => {
    const current = await readSunsetSettings(trx, userId);
    const next: SunsetSettings & { require_two_factor: number } = {
      sunset_enabled: input.sunset_enabled ?? current.sunset_enabled,
      sunset_days: input.sunset_days ?? current.sunset_days,
      sunset_min_messages: input.sunset_min_messages ?? current.sunset_min_messages,
      require_two_factor: input.require_two_factor ?? (await readRequireTwoFactor(trx, userId)),
    };
    await trx
      .insertInto('account_settings')
      .values({ user_id: userId, ...next, created_at: at, updated_at: at })
      .onConflict((oc) => oc.column('user_id').doUpdateSet({ ...next, updated_at: at }))
      .execute();
    await sweepSunset(trx, userId, now);
  });
}

/**
 * What the sunset policy would list now with the query's values (each missing one is the saved
 * one), whether or not it is on: how many addresses, and up to 20 of them, which only a caller
 * who may read contacts sees (the route needs `settings.read` only; a key made for settings must
 * not be a way around `contacts.read`).
 */
export async function sunsetPreview(
  deps: AppDeps,
  principal: Principal,
  query: SunsetPreviewInput,
): Promise<{ count: number; sample: string[] }> {
  const { db } = deps.database;
  const saved = await readSunsetSettings(db, principal.account);
  const days = query.sunset_days ?? saved.sunset_days;
  const min = query.sunset_min_messages ?? saved.sunset_min_messages;
  const preview = await previewSunset(db, principal.account, days, min, deps.clock.now());
  return allows(principal.grant, 'contacts.read') ? preview : { count: preview.count, sample: [] };
}
