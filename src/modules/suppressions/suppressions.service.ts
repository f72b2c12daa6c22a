import type { AppDeps } from '../../deps.js';
import { NotFound, Rnf } from '../../http/errors.js';
import { queryListSource } from '../../http/list-source.js';
import { deleteSuppression, selectSuppressions } from './suppressions.queries.js';
import { toSuppression, type SuppressionRow } from './suppressions.schema.js';

/** The account's suppressed addresses, newest first. */
export function listSuppressions(deps: AppDeps, userId: number) {
  return queryListSource(
    () => selectSuppressions(deps.database.db, userId),
    'id',
    (rows: SuppressionRow[]) => rows.map(toSuppression),
  );
}

/** Lifts the suppression of an address of the account; a missing address or one not suppressed here is `Record not found`. */
export async function liftSuppression(deps: AppDeps, userId: number, email: string | undefined): Promise<void> {
  const key = email?.trim().toLowerCase();
  if (!key || !(await deleteSuppression(deps.database.db, userId, key))) throw new NotFound(Rnf);
}
