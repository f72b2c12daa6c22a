/**
 * Two-factor authentication: TOTP (RFC 6238: SHA-1, 30-second steps, 6 digits, the secret in
 * unpadded base32) through `otpauth`, on the app clock, with a step of tolerance either way; a code
 * is accepted once (the step of the last accepted code is kept). Ten recovery codes, each usable
 * once in place of a code, kept only as hashes. The secret is kept sealed with the app secret.
 */
import { randomBytes } from 'node:crypto';
import * as OTPAuth from 'otpauth';
import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/index.js';
import { seal, unseal } from '../../util/seal.js';
import { hashSecret } from '../../util/secrets.js';
import { isoMicros } from '../../util/time.js';
import type { PersonRow } from './users.schema.js';

const SEAL_PURPOSE = 'totp-secret';
const PERIOD = 30;
const ISSUER = 'Campaign API';
/** How many recovery codes a person gets. */
export const RECOVERY_CODES = 10;

const totp = (secret: string, label = '') =>
  new OTPAuth.TOTP({ issuer: ISSUER, label, algorithm: 'SHA1', digits: 6, period: PERIOD, secret: OTPAuth.Secret.fromBase32(secret) });

/** A new secret (160 random bits, unpadded base32) and its `otpauth://` URL for an authenticator app. */
export function newTotpSecret(email: string): { secret: string; otpauth_url: string } {
  const secret = new OTPAuth.Secret({ size: 20 }).base32;
  return { secret, otpauth_url: totp(secret, email).toString() };
}

/** The secret as kept: sealed with the app secret. */
export const sealTotp = (deps: Pick<AppDeps, 'config'>, secret: string) => seal(deps.config.appSecret, SEAL_PURPOSE, secret);
/** A kept secret, opened; null when it does not open. */
export const openTotp = (deps: Pick<AppDeps, 'config'>, sealed: string | null) =>
  sealed ? unseal(deps.config.appSecret, SEAL_PURPOSE, sealed) : null;

/** The time step of `code` under `secret` at `now` (the current one or either neighbour), or null when it matches none. */
export function totpStep(secret: string, code: string, now: Date): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = totp(secret).validate({ token: code, timestamp: now.getTime(), window: 1 });
  return delta === null ? null : Math.floor(now.getTime() / 1000 / PERIOD) + delta;
}

/** Takes a code's step for the person: false when a code of that step (or a later one) was accepted already. */
export async function takeStep(db: Db, personId: number, step: number): Promise<boolean> {
  const r = await db
    .updateTable('people')
    .set({ two_factor_step: step })
    .where('id', '=', personId)
    .where('two_factor_step', '<', step)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** A recovery code as typed: letters and digits only, upper case. */
const normalised = (code: string) => code.replace(/[\s-]/g, '').toUpperCase();

/** Ten new recovery codes (80 random bits each, `XXXX-XXXX-XXXX-XXXX`), replacing the person's old ones. */
export async function newRecoveryCodes(db: Db, personId: number): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODES }, () =>
    OTPAuth.Secret.fromHex(randomBytes(10).toString('hex')).base32.match(/.{4}/g)!.join('-'),
  );
  await db.deleteFrom('recovery_codes').where('person_id', '=', personId).execute();
  await db
    .insertInto('recovery_codes')
    .values(codes.map((c) => ({ person_id: personId, code_hash: hashSecret(normalised(c)) })))
    .execute();
  return codes;
}

/** Uses a recovery code of the person: false when it is not one of theirs, or was used. */
async function useRecoveryCode(db: Db, personId: number, code: string, now: Date): Promise<boolean> {
  const r = await db
    .updateTable('recovery_codes')
    .set({ used_at: isoMicros(now) })
    .where('person_id', '=', personId)
    .where('code_hash', '=', hashSecret(normalised(code)))
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/**
 * Whether `code` is a second factor of the person now: a TOTP code not accepted before, or an
 * unused recovery code (which is then used up).
 */
export async function checkSecondFactor(deps: AppDeps, db: Db, person: PersonRow, code: string, now: Date): Promise<boolean> {
  const secret = openTotp(deps, person.two_factor_secret);
  if (!secret || code.length > 64) return false;
  const step = totpStep(secret, code.trim(), now);
  if (step !== null) return takeStep(db, person.id, step);
  return useRecoveryCode(db, person.id, code, now);
}

/** Turns two-factor off: the secret and the recovery codes go. */
export async function clearTwoFactor(db: Db, personId: number, now: Date): Promise<void> {
  await db.deleteFrom('recovery_codes').where('person_id', '=', personId).execute();
  await db
    .updateTable('people')
    .set({ two_factor_secret: null, two_factor_pending: null, updated_at: isoMicros(now) })
    .where('id', '=', personId)
    .execute();
}
