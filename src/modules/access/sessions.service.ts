import type { AppDeps } from '../../deps.js';
import { SESSION_IDLE_MS, SESSION_MAX_MS } from '../../http/auth.js';
import type { Principal } from '../../http/principal.js';
import { csrfToken } from '../../http/csrf.js';
import { ROLE_GRANTS, SCOPES, type Role, type Scope } from '../../http/scopes.js';
import { AppError } from '../../http/errors.js';
import { joinToken, newSecret, splitToken } from '../../http/secret-tokens.js';
import type { ScheduledTask } from '../../jobs/scheduler.lane.js';
import { hashSecret, sameHash } from '../../util/secrets.js';
import { isoMicros } from '../../util/time.js';
import { insertAuditEntry } from './audit.queries.js';
import { emailKey, personByEmail, personById, updatePerson } from './users.queries.js';
import { toUser, type PersonRow, type User } from './users.schema.js';
import { personActor, type RequestMeta } from './users.service.js';
import { checkForClient, verifyPassword } from './sessions.passwords.js';
import { countFailure, FAILURE_WINDOW_MS, refuseWhileHeldBack } from './sessions.throttle.js';
import { checkSecondFactor } from './sessions.two-factor.js';
import {
  clearFailures,
  deleteEndedSessions,
  deleteFailuresBefore,
  endSession,
  findSession,
  insertSession,
  readRequireTwoFactor,
} from './sessions.queries.js';

export const WRONG_CREDENTIALS = 'Invalid email or password';

/** A session begun: the cookie's value, and what the answer shows. */
export interface SignedIn extends SessionInfo {
  cookie: string;
}

/** A failed sign-in: counted for the address and client address, and written to the person's audit log when there is one. */
async function failed(
  deps: AppDeps,
  key: string,
  person: PersonRow | undefined,
  text: string,
  meta: RequestMeta,
  now: Date,
): Promise<never> {
  await countFailure(deps.database.db, key, meta.ip ?? '', now);
  if (person)
    await insertAuditEntry(deps.database.db, {
      userId: person.user_id,
      actor: personActor(person),
      action: 'session.sign_in_failed',
      target: String(person.id),
      status: 401,
      ip: meta.ip,
      userAgent: meta.userAgent,
      at: now,
    });
  throw new AppError(401, text);
}

/** What a session answers: the person, the session's CSRF token, the scopes of the person's role and the account's two-factor rule. */
export interface SessionInfo {
  user: User;
  csrf_token: string;
  scopes: Scope[];
  require_two_factor: number;
}

/**
 * The answer of a session: the person, the session's CSRF token (a new tab of the console gets it
 * here, since no script can read the cookie), the scopes the person's role grants (so the console
 * offers only what the person may do) and whether the account requires two-factor authentication.
 */
export async function sessionAnswer(deps: AppDeps, person: PersonRow, cookie: string): Promise<SessionInfo> {
  const grant = ROLE_GRANTS[person.role as Role];
  return {
    user: toUser(person),
    csrf_token: csrfToken(deps.config.appSecret, cookie),
    scopes: SCOPES.filter((s) => grant?.scopes.has(s)),
    require_two_factor: await readRequireTwoFactor(deps.database.db, person.user_id),
  };
}

/**
 * Signs a person in by address and password: a new session (a new id whatever cookie came with
 * the request, whose session, if any, ends), its cookie value and CSRF token. A wrong address and a
 * wrong password get the same answer, after the same time (an unknown address waits as long as a
 * hash takes). Failures hold the address back as `sessions.throttle.ts` says.
 */
export async function signIn(
  deps: AppDeps,
  input: { email: string; password: string; code?: string },
  presented: string | undefined,
  meta: RequestMeta,
): Promise<SignedIn> {
  const now = deps.clock.now();
  const key = emailKey(input.email);
  await refuseWhileHeldBack(deps.database.db, key, meta.ip ?? '', now);
  const person = await personByEmail(deps.database.db, input.email);
  const usable = person && person.password_hash !== null ? person : undefined;
  const account =
    usable && (await deps.database.db.selectFrom('accounts').select('disabled').where('id', '=', usable.user_id).executeTakeFirst());
  const match = await checkForClient(meta.ip, () => verifyPassword(input.password, usable?.password_hash ?? null));
  if (!usable || !match || !account || account.disabled) return failed(deps, key, usable, WRONG_CREDENTIALS, meta, now);
  if (usable.two_factor_secret) {
    if (!input.code) throw new AppError(401, 'Two-factor code required');
    if (!(await checkSecondFactor(deps, deps.database.db, usable, input.code, now)))
      return failed(deps, key, usable, 'Invalid two-factor code', meta, now);
  }

  const secret = newSecret();
  const cookie = await deps.database.db.transaction().execute(async (trx) => {
    // A cookie brought to the sign-in names no session afterwards: the session it named ends.
    const old = splitToken(presented);
    if (old) {
      const row = await findSession(trx, old.id);
      if (row && sameHash(hashSecret(old.secret), row.secret_hash)) await endSession(trx, row.id);
    }
    const id = await insertSession(trx, usable.user_id, usable.id, hashSecret(secret), now, new Date(now.getTime() + SESSION_MAX_MS));
    await updatePerson(trx, usable.id, { last_sign_in_at: isoMicros(now) }, now);
    await clearFailures(trx, key, meta.ip ?? '');
    await insertAuditEntry(trx, {
      userId: usable.user_id,
      actor: personActor(usable),
      action: 'session.sign_in',
      target: String(usable.id),
      status: 200,
      ip: meta.ip,
      userAgent: meta.userAgent,
      at: now,
    });
    return joinToken(id, secret);
  });
  const fresh = (await personById(deps.database.db, usable.id))!;
  return { cookie, ...(await sessionAnswer(deps, fresh, cookie)) };
}

/** The signed-in person of a request (a session route: there is one). */
export async function currentPerson(deps: AppDeps, principal: Principal): Promise<PersonRow> {
  const person = await personById(deps.database.db, principal.actor.id);
  if (!person) throw new AppError(401, 'Not signed in');
  return person;
}

/** Ends the request's session. */
export async function signOut(deps: AppDeps, principal: Principal, meta: RequestMeta): Promise<void> {
  const now = deps.clock.now();
  await deps.database.db.transaction().execute(async (trx) => {
    await endSession(trx, principal.session!.id);
    await insertAuditEntry(trx, {
      userId: principal.account,
      actor: principal.actor,
      action: 'session.sign_out',
      target: String(principal.actor.id),
      status: 200,
      ip: meta.ip,
      userAgent: meta.userAgent,
      at: now,
    });
  });
}

/** Deletes the sessions that ended by time and the failed sign-ins that no longer count. */
export const sessionCleanupTask: ScheduledTask = {
  name: 'delete ended sessions and old failed sign-ins',
  run: async (deps, now) =>
    (await deleteEndedSessions(deps.database.db, now, SESSION_IDLE_MS)) +
    (await deleteFailuresBefore(deps.database.db, new Date(now.getTime() - FAILURE_WINDOW_MS))),
};
