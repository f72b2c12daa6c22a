import type { AppDeps } from '../../deps.js';
import { NotFound, Rnf } from '../../http/errors.js';
import { queryListSource } from '../../http/list-source.js';
import { suppressionEntries } from '../../suppression/suppression.reads.js';
import { liftSuppression as liftAddress } from '../../suppression/suppression.writes.js';
import { sunsetLifted } from '../../messages/messages.writes.js';
import { toSuppression, type SuppressionRow } from './suppressions.schema.js';

/** The account's suppressed addresses, newest first (the list is src/suppression/'s). */
export function listSuppressions(deps: AppDeps, userId: number) {
  return queryListSource(
    () => suppressionEntries(deps.database.db, userId),
    'id',
    (rows: SuppressionRow[]) => rows.map(toSuppression),
  );
}

/**
 * Lifts the suppression of an address of the account (any reason, `inactive` included: the address
 * may be mailed again, and the sunset policy counts its messages again only from now on); a
 * missing address or one not suppressed here is `Record not found`.
 */
export async function liftSuppression(deps: AppDeps, userId: number, email: string | undefined): Promise<void> {
  const key = email?.trim().toLowerCase();
  const lifted = key
    ? await deps.database.db.transaction().execute(async (trx) => {
        if (!(await liftAddress(trx, userId, key))) return false;
        await sunsetLifted(trx, userId, key);
        return true;
      })
    : false;
  if (!lifted) throw new NotFound(Rnf);
}
