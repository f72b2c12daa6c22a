import { Type } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { ApiKeyTable } from '../../db/types.js';
import { Id, ListOf, Nullable, PagingQuery, QueryIds, Success, Timestamp } from '../../http/schemas.js';
import { SCOPES } from '../../http/scopes.js';
import { Secret } from '../../http/secret-fields.js';

export type KeyRow = Selectable<ApiKeyTable>;

const ScopesField = Type.Array(Type.String({ maxLength: 32 }), {
  minItems: 1,
  maxItems: SCOPES.length,
  description:
    'The scopes the key may use (`contacts.read`, `contacts.write`, …: `write` includes `read`), or the single value `full` ' +
    '(every scope, now and later, and the power to make and remove owners). A key never gets a scope its maker does not hold.',
});

/** `POST /keys/create`. */
export const CreateKeyBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100, description: 'A name to tell the key by (the program that uses it).' }),
  scopes: ScopesField,
});

/** `POST /keys/update`: only the fields given change. */
export const UpdateKeyBody = Type.Object({
  id: Id,
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  scopes: Type.Optional(ScopesField),
});

export const KeyIdQuery = QueryIds('id');
export const ListKeysQuery = PagingQuery;

/** Who did something: a person or a key of the account. */
export const ActorShape = Type.Object(
  {
    type: Type.Union([Type.Literal('user'), Type.Literal('key')]),
    id: Type.Integer(),
    name: Type.String({ description: 'The name (a key) or email (a person) at the time.' }),
  },
  { description: 'A person (`user`) or a key (`key`) of the account.' },
);

/** A key as the API shows it: never its secret. */
export const KeyShape = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  public_key: Type.String({ description: 'The `PublicKey` header value (`pk_…`).' }),
  scopes: Type.Union([Type.Literal('full'), Type.Array(Type.String())], { description: '`full`, or the list of scopes.' }),
  created_at: Timestamp,
  created_by: Nullable(ActorShape),
  last_used_at: Nullable(Type.String({ description: 'UTC, `YYYY-MM-DDTHH:MM:SS.ffffffZ`; moves at most once a minute.' })),
});

export const KeyList = ListOf('keys', KeyShape, "The account's keys, newest first; never a secret.");

export const KeyCreated = Success(
  Type.Object({
    id: Type.Integer(),
    public_key: Type.String({ description: 'The `PublicKey` header value.' }),
    secret_key: Secret(Type.String({ description: 'The `SecretKey` header value: shown only in this answer, stored only as a hash.' })),
  }),
  'The new key, with its secret (shown this once).',
);

/** The API shape of a key. */
export function toKey(row: KeyRow) {
  return {
    id: row.id,
    name: row.name,
    public_key: row.public_key,
    scopes: row.scopes === 'full' ? ('full' as const) : (JSON.parse(row.scopes) as string[]),
    created_at: row.created_at,
    created_by:
      row.created_by_type && row.created_by_id !== null
        ? { type: row.created_by_type as 'user' | 'key', id: row.created_by_id, name: row.created_by_name ?? '' }
        : null,
    last_used_at: row.last_used_at,
  };
}
