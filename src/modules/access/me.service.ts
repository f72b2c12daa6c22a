import type { AppDeps } from '../../deps.js';
import type { Principal } from '../../http/principal.js';
import { AppError, Conflict, ValidationError } from '../../http/errors.js';
import { updatePerson } from './users.queries.js';
import { checkForClient, hashPassword, verifyPassword } from './sessions.passwords.js';
import { countFailure, refuseWhileHeldBack } from './sessions.throttle.js';
import { endPersonSessions } from './sessions.queries.js';
import { currentPerson } from './sessions.service.js';
import {
  checkSecondFactor,
  clearTwoFactor,
  newRecoveryCodes,
  newTotpSecret,
  openTotp,
  sealTotp,
  takeStep,
  totpStep,
} from './sessions.two-factor.js';

const INVALID_CODE = 'The two-factor code is invalid.';

/**
 * Starts setting up two-factor authentication: a new secret, kept (sealed) until a code of it
 * enables it. 409 when it is on already.
 */
export async function setupTwoFactor(deps: AppDeps, principal: Principal): Promise<{ secret: string; otpauth_url: string }> {
  const person = await currentPerson(deps, principal);
  if (person.two_factor_secret) throw new Conflict('Two-factor authentication is already on.');
  const made = newTotpSecret(person.email);
  await updatePerson(deps.database.db, person.id, { two_factor_pending: sealTotp(deps, made.secret) }, deps.clock.now());
  return made;
}

/** How recent a sign-in turning two-factor on needs. */
export const ENABLE_WITHIN_MS = 10 * 60 * 1000;
export const SIGN_IN_AGAIN = 'Sign in again to turn on two-factor authentication: it needs a sign-in within the last 10 minutes.';

/**
 * Turns two-factor on with a code of the secret being set up; answers the ten recovery codes,
 * shown this once. Only within 10 minutes of signing in (else 403): whoever turns it on decides
 * which app's codes the person needs from then on, so a session stolen hours later must not be
 * able to lock the person out with an app of its own.
 */
export async function enableTwoFactor(deps: AppDeps, principal: Principal, code: string): Promise<{ recovery_codes: string[] }> {
  const now = deps.clock.now();
  if (now.getTime() - principal.session!.signedInAt > ENABLE_WITHIN_MS) throw new AppError(403, SIGN_IN_AGAIN);
  return deps.database.db.transaction().execute(async (trx) => {
    const person = await currentPerson({ ...deps, database: { ...deps.database, db: trx } }, principal);
    if (person.two_factor_secret) throw new Conflict('Two-factor authentication is already on.');
    const secret = openTotp(deps, person.two_factor_pending);
    if (!secret) throw new Conflict('Set up two-factor authentication first.');
    const step = totpStep(secret, code.trim(), now);
    if (step === null || !(await takeStep(trx, person.id, step))) throw new ValidationError({ code: [INVALID_CODE] });
    await updatePerson(trx, person.id, { two_factor_secret: person.two_factor_pending, two_factor_pending: null }, now);
    return { recovery_codes: await newRecoveryCodes(trx, person.id) };
  });
}

/**
 * Turns two-factor off, with the password and a code (or a recovery code). A wrong password or
 * code counts as a failed sign-in of the person from this client address, under the same lock.
 */
export async function disableTwoFactor(
  deps: AppDeps,
  principal: Principal,
  input: { password: string; code: string },
  ip: string,
): Promise<void> {
  const now = deps.clock.now();
  const person = await currentPerson(deps, principal);
  if (!person.two_factor_secret) throw new Conflict('Two-factor authentication is not on.');
  await refuseWhileHeldBack(deps.database.db, person.email_key, ip, now);
  const passwordOk = await checkForClient(ip, () => verifyPassword(input.password, person.password_hash));
  const errors: Record<string, string[]> = {};
  await deps.database.db.transaction().execute(async (trx) => {
    if (!passwordOk) errors.password = ['The password is incorrect.'];
    else if (!(await checkSecondFactor(deps, trx, person, input.code, now))) errors.code = [INVALID_CODE];
    else await clearTwoFactor(trx, person.id, now);
  });
  if (Object.keys(errors).length > 0) {
    await countFailure(deps.database.db, person.email_key, ip, now);
    throw new ValidationError(errors);
  }
}

/**
 * Changes the password, given the current one; every other session of the person ends. A wrong
 * current password counts as a failed sign-in of the person from this client address.
 */
export async function changePassword(
  deps: AppDeps,
  principal: Principal,
  input: { current_password: string; password: string },
  ip: string,
): Promise<void> {
  const now = deps.clock.now();
  const person = await currentPerson(deps, principal);
  await refuseWhileHeldBack(deps.database.db, person.email_key, ip, now);
  if (!(await checkForClient(ip, () => verifyPassword(input.current_password, person.password_hash)))) {
    await countFailure(deps.database.db, person.email_key, ip, now);
    throw new ValidationError({ current_password: ['The current password is incorrect.'] });
  }
  const hash = await checkForClient(ip, () => hashPassword(input.password));
  await deps.database.db.transaction().execute(async (trx) => {
    await updatePerson(trx, person.id, { password_hash: hash }, now);
    await endPersonSessions(trx, person.id, principal.session!.id);
  });
}
