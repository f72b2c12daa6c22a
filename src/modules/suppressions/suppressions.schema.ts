import { Type } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { SuppressionTable } from '../../db/types.js';
import { Enum, ListOf, Nullable, PagingQuery, Timestamp } from '../../http/schemas.js';

export type SuppressionRow = Pick<Selectable<SuppressionTable>, 'id' | 'email' | 'reason' | 'detail' | 'created_at'>;

/** `DELETE /suppressions/delete?email=`: the address stays text; a missing one is `Record not found`. */
export const LiftQuery = Type.Object({ email: Type.Optional(Type.String({ maxLength: 254 })) });

export const ListSuppressionsQuery = PagingQuery;

export const SuppressionShape = Type.Object(
  {
    email: Type.String(),
    reason: Enum(['hard_bounce', 'soft_bounces', 'complaint', 'inactive'] as const),
    detail: Nullable(Type.String({ description: "The server's answer or the report's text that caused it." })),
    created_at: Timestamp,
  },
  {
    description:
      'An address the account no longer mails: it bounced hard, bounced soft 3 times within 30 days, its recipient complained, ' +
      'or (`inactive`, while the sunset policy of `/account/settings` is on) no person opened or clicked its mail for too long; ' +
      'an inactive address still gets the mail the service sends of itself (notifications, sender verification).',
  },
);

export const SuppressionList = ListOf('suppressions', SuppressionShape, "The account's suppressed addresses, newest first.");

/** The API shape of a suppressed address. */
export function toSuppression(row: SuppressionRow) {
  return { email: row.email, reason: row.reason, detail: row.detail, created_at: row.created_at };
}
export type Suppression = ReturnType<typeof toSuppression>;
