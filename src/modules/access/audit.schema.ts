import { Type, type Static } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { AuditLogTable } from '../../db/types.js';
import { Enum, Int, ListOf, MAX_ID, Nullable, Paging, Timestamp } from '../../http/schemas.js';
import { ActorShape } from './keys.schema.js';

export type AuditRow = Selectable<AuditLogTable>;

/** `GET /audit-log`: filters, all optional, and paging. */
export const AuditQuery = Type.Object({
  actor_type: Type.Optional(Enum(['user', 'key'] as const)),
  actor_id: Type.Optional(Int({ minimum: 1, maximum: MAX_ID, description: 'With `actor_type`: one person or key.' })),
  action: Type.Optional(Type.String({ maxLength: 200, description: 'One action exactly: `POST /contacts/add`, `session.sign_in`, …' })),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'Entries at or after this time (ISO 8601 with a zone).' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'Entries before this time (ISO 8601 with a zone).' })),
  ...Paging,
});
export type AuditFilters = Static<typeof AuditQuery>;

export const AuditEntryShape = Type.Object({
  id: Type.Integer(),
  actor: ActorShape,
  action: Type.String({
    description: '`<METHOD> <path>` of a request, or an event: `session.sign_in`, `session.sign_in_failed`, `session.sign_out`, …',
  }),
  target: Nullable(Type.String({ description: "The record's id or utr (several ids comma-separated), when there is one." })),
  status: Type.Integer({ description: 'The HTTP status of the answer.' }),
  ip: Nullable(Type.String({ description: "The client's address (from a proxy header only through `TRUST_PROXY`)." })),
  user_agent: Nullable(Type.String()),
  created_at: Timestamp,
});

export const AuditList = ListOf('entries', AuditEntryShape, 'The entries, newest first.');

/** The API shape of an entry. */
export function toAuditEntry(row: AuditRow) {
  return {
    id: row.id,
    actor: { type: row.actor_type as 'user' | 'key', id: row.actor_id, name: row.actor_name },
    action: row.action,
    target: row.target,
    status: row.status,
    ip: row.ip,
    user_agent: row.user_agent,
    created_at: row.created_at,
  };
}
