import type { AppDeps } from '../../deps.js';
import { takeInEvent } from '../../inbound/intake.js';
import { NotFound, Rnf } from '../../http/errors.js';
import { queryListSource } from '../../http/list-source.js';
import { deleteSuppression, selectSuppressions } from './suppressions.queries.js';
import { toSuppression, type SuppressionRow } from './suppressions.schema.js';

/**
 * Takes in a bounce or complaint reported by the caller: with `message_id`, matched to that
 * message of the caller's account (another account's message, or none: nothing changes); without,
 * applied to the address within the caller's account only, counted on no message.
 */
export async function reportBounce(
  deps: AppDeps,
  userId: number,
  input: { email: string; type: 'hard' | 'soft' | 'complaint'; reason?: string; message_id?: string },
): Promise<void> {
  const type = input.type === 'complaint' ? null : input.type;
  await takeInEvent(
    deps,
    {
      source: 'report',
      kind: type === null ? 'complaint' : 'bounce',
      type,
      email: input.email,
      messageId: input.message_id ?? null,
      reason: input.reason ?? null,
    },
    { userId },
  );
}

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
