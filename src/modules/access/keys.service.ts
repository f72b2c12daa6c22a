import type { AppDeps } from '../../deps.js';
import { notAllowed, type Principal } from '../../http/principal.js';
import { NotFound, Rnf, ValidationError } from '../../http/errors.js';
import type { ListSource } from '../../http/list.js';
import { covers, grantOf, knownScope, type Grant, type Scope } from '../../http/scopes.js';
import { hashSecret } from '../../util/secrets.js';
import { newKeyPair } from './keys.pair.js';
import { countKeys, deleteKeyRow, findKey, insertKey, keysBefore, keysPage, updateKeyRow } from './keys.queries.js';
import { toKey, type KeyRow } from './keys.schema.js';

/** The account's keys, newest first, for `sendList`. */
export function listKeys(deps: AppDeps, userId: number): ListSource<KeyRow, ReturnType<typeof toKey>> {
  const { db } = deps.database;
  return {
    batch: (before, limit) => keysBefore(db, userId, before, limit),
    page: (offset, limit) => keysPage(db, userId, offset, limit),
    count: () => countKeys(db, userId),
    map: (rows) => rows.map(toKey),
  };
}

/**
 * Reads the `scopes` field: `full` alone, or known scopes (each once). Anything else is a 422; a
 * scope the caller does not hold itself is a 403 naming it, so a key never grants more than its maker.
 */
function checkedScopes(principal: Principal, given: string[]): { stored: string; grant: Grant } {
  const values = [...new Set(given.map((s) => s.trim()))];
  const full = values.length === 1 && values[0] === 'full';
  if (!full && !values.every(knownScope)) throw new ValidationError({ scopes: ['The selected scopes is invalid.'] });
  const grant = full ? grantOf('full') : grantOf(values as Scope[]);
  if (!covers(principal.grant, grant)) {
    const missing = full ? 'grant full scopes' : [...grant.scopes].find((s) => !principal.grant.scopes.has(s))!;
    throw notAllowed(principal.actor, missing);
  }
  return { stored: full ? 'full' : JSON.stringify(values), grant };
}

/** A name as stored: trimmed, and required. */
function checkedName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw new ValidationError({ name: ['The name field is required.'] });
  return trimmed;
}

/** Makes a key for the caller's account; the secret is returned this once and stored only as a hash. */
export async function createKey(
  deps: AppDeps,
  principal: Principal,
  input: { name: string; scopes: string[] },
): Promise<{ id: number; public_key: string; secret_key: string }> {
  const name = checkedName(input.name);
  const { stored } = checkedScopes(principal, input.scopes);
  const { publicKey, secretKey } = newKeyPair();
  const id = await insertKey(
    deps.database.db,
    principal.account,
    { name, publicKey, secretHash: hashSecret(secretKey), scopes: stored, createdBy: principal.actor, rootPerson: principal.rootPerson },
    deps.clock.now(),
  );
  return { id, public_key: publicKey, secret_key: secretKey };
}

/** Renames a key or changes its scopes (within the caller's own); 404 for another account's. */
export async function updateKey(
  deps: AppDeps,
  principal: Principal,
  input: { id: number; name?: string; scopes?: string[] },
): Promise<void> {
  const { db } = deps.database;
  const row = await findKey(db, principal.account, input.id);
  if (!row) throw new NotFound(Rnf);
  const name = input.name === undefined ? row.name : checkedName(input.name);
  const scopes = input.scopes === undefined ? row.scopes : checkedScopes(principal, input.scopes).stored;
  await updateKeyRow(db, principal.account, row.id, { name, scopes }, deps.clock.now());
}

/** Revokes a key of the account at once (its next request is refused). */
export async function deleteKey(deps: AppDeps, userId: number, id: number | null): Promise<void> {
  if (id === null || !(await deleteKeyRow(deps.database.db, userId, id))) throw new NotFound(Rnf);
}
