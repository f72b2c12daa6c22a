import type { Config } from '../../config.js';
import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/index.js';
import { isUniqueViolation } from '../../db/dialect.js';
import { notAllowed, type Actor, type Principal } from '../../http/principal.js';
import { AppError, Conflict, NotFound, Rnf, ValidationError } from '../../http/errors.js';
import type { ListSource } from '../../http/list.js';
import { covers, ROLE_GRANTS, SCOPES, type Role } from '../../http/scopes.js';
import { joinToken, newSecret, splitToken } from '../../http/secret-tokens.js';
import { hashSecret, sameHash } from '../../util/secrets.js';
import { insertAuditEntry } from './audit.queries.js';
import { checkForClient, hashPassword } from './sessions.passwords.js';
import { clearFailures, endPersonSessions } from './sessions.queries.js';
import { enqueueAccessMail, invitationElsewhereMail, invitationMail, resetMail } from './users.mail.js';
import {
  countOwners,
  countPeople,
  countTokensSince,
  deletePerson,
  findPerson,
  findToken,
  heldKey,
  insertPerson,
  insertToken,
  lockAccount,
  peopleBefore,
  peoplePage,
  personByEmail,
  personById,
  personOfAccount,
  updatePerson,
  useToken,
  type TokenPurpose,
} from './users.queries.js';
import { toUser, type PersonRow } from './users.schema.js';

export const ONLY_OWNERS = 'Only an owner can make or remove an owner.';
export const LAST_OWNER = 'An account keeps at least one owner';
export const LINK_GONE = 'This link is no longer valid';

const HOUR = 60 * 60 * 1000;
const INVITE_TTL_MS = 7 * 24 * HOUR;
const RESET_TTL_MS = HOUR;
/** At most this many reset mails per person per hour, whoever asks. */
const RESETS_PER_HOUR = 3;

/** Where a request came from, for the audit entries written outside a keyed request. */
export interface RequestMeta {
  ip: string | null;
  userAgent: string | null;
}

/** The account's people, newest first, for `sendList`. */
export function listUsers(deps: AppDeps, userId: number): ListSource<PersonRow, ReturnType<typeof toUser>> {
  const { db } = deps.database;
  return {
    batch: (before, limit) => peopleBefore(db, userId, before, limit),
    page: (offset, limit) => peoplePage(db, userId, offset, limit),
    count: () => countPeople(db, userId),
    map: (rows) => rows.map(toUser),
  };
}

/** The actor a person is in the audit log and in what they make: their address names them. */
export const personActor = (p: Pick<PersonRow, 'id' | 'email'>): Actor => ({ type: 'user', id: p.id, name: p.email });

/** A link for `person`: the token's hash stored, the token returned (for the mail, never kept). */
async function issueLink(db: Db, person: PersonRow, purpose: TokenPurpose, ttlMs: number, now: Date): Promise<string> {
  const secret = newSecret();
  const id = await insertToken(
    db,
    { userId: person.user_id, personId: person.id, purpose, secretHash: hashSecret(secret), expiresAt: new Date(now.getTime() + ttlMs) },
    now,
  );
  return joinToken(id, secret);
}

/** The invitation link of a token. */
const inviteLink = (config: Pick<Config, 'publicUrl'>, token: string) => `${config.publicUrl}/app/invite/${token}`;

/** Only an owner (or a `full` key) may make, change or remove an owner. */
function checkOwnerPower(principal: Principal, role: string, newRole?: string): void {
  if ((role === 'owner' || newRole === 'owner') && !principal.grant.full) throw new AppError(403, ONLY_OWNERS);
}

/**
 * Giving someone a role needs every scope of it, as giving a key a scope does: a key with only
 * `users.write` must not make an admin, who holds every scope. 403 naming the first scope missing.
 */
function checkRoleGrant(principal: Principal, role: Role): void {
  const grant = ROLE_GRANTS[role];
  if (covers(principal.grant, grant)) return;
  throw notAllowed(principal.actor, SCOPES.find((s) => grant.scopes.has(s) && !principal.grant.scopes.has(s)) ?? 'grant full scopes');
}

/** Refuses to leave the account without an owner who has accepted (people only: keys do not count). */
async function keepOneOwner(trx: Db, person: PersonRow, newRole: string | null): Promise<void> {
  if (person.role !== 'owner' || person.password_hash === null || newRole === 'owner') return;
  await lockAccount(trx, person.user_id);
  if ((await countOwners(trx, person.user_id)) <= 1) throw new Conflict(LAST_OWNER);
}

const TAKEN = () => new ValidationError({ email: ['The email has already been taken.'] });

/** Makes an invited person (no password yet) with an invitation link; returns the person and link. */
async function invite(
  trx: Db,
  config: Config,
  userId: number,
  email: string,
  role: Role,
  now: Date,
): Promise<{ id: number; link: string }> {
  if (await personByEmail(trx, email)) throw TAKEN();
  let id: number;
  try {
    id = await insertPerson(trx, userId, email, role, now);
  } catch (err) {
    if (isUniqueViolation(err)) throw TAKEN();
    throw err;
  }
  const person = (await personById(trx, id))!;
  return { id, link: inviteLink(config, await issueLink(trx, person, 'invite', INVITE_TTL_MS, now)) };
}

/**
 * Invites a person to the caller's account: mails a link, valid 7 days and once, where they set a
 * name and a password. An address belongs to one person of one account: inviting an address of
 * another account's person answers as for a fresh address (the caller must not learn who uses the
 * service), lists the invitation as any other, and mails the address, without a link, what
 * happened. Inviting an address the account already has: 422.
 */
export async function inviteUser(deps: AppDeps, principal: Principal, input: { email: string; role: Role }): Promise<number> {
  checkOwnerPower(principal, input.role);
  checkRoleGrant(principal, input.role);
  const now = deps.clock.now();
  const to = input.email.trim();
  return deps.database.db.transaction().execute(async (trx) => {
    if (await personOfAccount(trx, principal.account, to)) throw TAKEN();
    const account = await trx.selectFrom('accounts').select('name').where('id', '=', principal.account).executeTakeFirstOrThrow();
    const elsewhere = await personByEmail(trx, to);
    if (elsewhere) {
      const id = await insertPerson(trx, principal.account, to, input.role, now, heldKey(principal.account, to));
      await enqueueAccessMail(trx, deps.config, principal.account, invitationElsewhereMail(deps.config, to, account.name, input.role), now);
      return id;
    }
    const { id, link } = await invite(trx, deps.config, principal.account, to, input.role, now);
    await enqueueAccessMail(trx, deps.config, principal.account, invitationMail(deps.config, to, account.name, input.role, link), now);
    return id;
  });
}

/**
 * The first owner of an account made by the command line (`--owner-email`) or at the first start
 * (`OWNER_EMAIL`): an invited owner, whose one-time link (to set a name and password) is returned
 * to be printed rather than mailed.
 */
export async function inviteFirstOwner(db: Db, config: Config, userId: number, email: string, now: Date): Promise<string> {
  return db.isTransaction
    ? (await invite(db, config, userId, email, 'owner', now)).link
    : db.transaction().execute(async (trx) => (await invite(trx, config, userId, email, 'owner', now)).link);
}

/** Changes a person's role; the change counts from their next request. */
export async function updateUserRole(deps: AppDeps, principal: Principal, input: { id: number; role: Role }): Promise<void> {
  await deps.database.db.transaction().execute(async (trx) => {
    const person = await findPerson(trx, principal.account, input.id);
    if (!person) throw new NotFound(Rnf);
    checkOwnerPower(principal, person.role, input.role);
    checkRoleGrant(principal, input.role);
    await keepOneOwner(trx, person, input.role);
    await updatePerson(trx, person.id, { role: input.role }, deps.clock.now());
  });
}

/** Removes a person; their sessions end at once. */
export async function deleteUser(deps: AppDeps, principal: Principal, id: number | null): Promise<void> {
  await deps.database.db.transaction().execute(async (trx) => {
    const person = id === null ? undefined : await findPerson(trx, principal.account, id);
    if (!person) throw new NotFound(Rnf);
    checkOwnerPower(principal, person.role);
    await keepOneOwner(trx, person, null);
    await deletePerson(trx, principal.account, person.id);
  });
}

/**
 * The person of a genuine, unused and unexpired link of `purpose`, the link marked used in `trx`;
 * 410 for anything else. The token's secret is compared with the stored hash in constant time.
 */
async function redeem(trx: Db, purpose: TokenPurpose, token: string, now: Date): Promise<PersonRow> {
  const parts = splitToken(token);
  const row = parts ? await findToken(trx, parts.id, purpose) : undefined;
  const genuine = parts !== null && sameHash(hashSecret(parts.secret), row?.secret_hash ?? '0'.repeat(64));
  if (!row || !genuine || row.used_at !== null || Date.parse(row.expires_at) <= now.getTime()) throw new AppError(410, LINK_GONE);
  if (!(await useToken(trx, row.id, now))) throw new AppError(410, LINK_GONE);
  const person = await personById(trx, row.person_id);
  if (!person) throw new AppError(410, LINK_GONE);
  return person;
}

/** Accepts an invitation: the person sets a name and a password, and may sign in. */
export async function acceptInvite(
  deps: AppDeps,
  input: { token: string; name: string; password: string },
  meta: RequestMeta,
): Promise<void> {
  const name = input.name.trim();
  if (!name) throw new ValidationError({ name: ['The name field is required.'] });
  const hash = await checkForClient(meta.ip, () => hashPassword(input.password));
  const now = deps.clock.now();
  await deps.database.db.transaction().execute(async (trx) => {
    const person = await redeem(trx, 'invite', input.token, now);
    await updatePerson(trx, person.id, { name, password_hash: hash }, now);
    await insertAuditEntry(trx, {
      userId: person.user_id,
      actor: personActor(person),
      action: 'session.invite_accepted',
      target: String(person.id),
      status: 200,
      ip: meta.ip,
      userAgent: meta.userAgent,
      at: now,
    });
  });
}

/**
 * Mails a reset link (valid 1 hour, once) to a person who has a password; nothing for any other
 * address, and the caller is answered alike either way. At most three links an hour per person.
 */
export async function forgotPassword(deps: AppDeps, email: string): Promise<void> {
  const now = deps.clock.now();
  await deps.database.db.transaction().execute(async (trx) => {
    const person = await personByEmail(trx, email);
    if (!person || person.password_hash === null) return;
    if ((await countTokensSince(trx, person.id, 'reset', new Date(now.getTime() - HOUR))) >= RESETS_PER_HOUR) return;
    const token = await issueLink(trx, person, 'reset', RESET_TTL_MS, now);
    await enqueueAccessMail(
      trx,
      deps.config,
      person.user_id,
      resetMail(deps.config, person.email, `${deps.config.publicUrl}/app/reset/${token}`),
      now,
    );
  });
}

/** Sets a new password through a reset link; every session of the person ends. */
export async function resetPassword(deps: AppDeps, input: { token: string; password: string }, meta: RequestMeta): Promise<void> {
  const hash = await checkForClient(meta.ip, () => hashPassword(input.password));
  const now = deps.clock.now();
  await deps.database.db.transaction().execute(async (trx) => {
    const person = await redeem(trx, 'reset', input.token, now);
    await updatePerson(trx, person.id, { password_hash: hash }, now);
    await endPersonSessions(trx, person.id, null);
    await clearFailures(trx, person.email_key, null);
    await insertAuditEntry(trx, {
      userId: person.user_id,
      actor: personActor(person),
      action: 'session.password_reset',
      target: String(person.id),
      status: 200,
      ip: meta.ip,
      userAgent: meta.userAgent,
      at: now,
    });
  });
}
