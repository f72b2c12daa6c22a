import { Type } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { PersonTable } from '../../db/types.js';
import { Email, Enum, Id, ListOf, Nullable, PagingQuery, QueryIds, Timestamp } from '../../http/schemas.js';
import { ROLES } from '../../http/scopes.js';
import { MAX_PASSWORD, MIN_PASSWORD } from './sessions.passwords.js';

export type PersonRow = Selectable<PersonTable>;

const RoleField = Enum(ROLES);

/** A password as a person sets it. */
export const NewPassword = Type.String({
  minLength: MIN_PASSWORD,
  maxLength: MAX_PASSWORD,
  description: `At least ${MIN_PASSWORD} characters.`,
});

/** `POST /users/invite`. */
export const InviteBody = Type.Object({
  email: Email,
  role: Type.Unsafe<(typeof ROLES)[number]>({
    ...RoleField,
    description: '`owner`, `admin`, `editor` or `viewer`; only an owner (or a `full` key) may invite an owner.',
  }),
});

/** `POST /users/update`. */
export const UpdateUserBody = Type.Object({ id: Id, role: RoleField });

export const UserIdQuery = QueryIds('id');
export const ListUsersQuery = PagingQuery;

/** `POST /session/accept-invite`. */
export const AcceptInviteBody = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 200, description: 'The token of the invitation link.' }),
  name: Type.String({ minLength: 1, maxLength: 100 }),
  password: NewPassword,
});

/** `POST /session/forgot`. */
export const ForgotBody = Type.Object({ email: Email });

/** `POST /session/reset`. */
export const ResetBody = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 200, description: 'The token of the reset link.' }),
  password: NewPassword,
});

/** A person as the API shows them. */
export const UserShape = Type.Object({
  id: Type.Integer(),
  email: Type.String(),
  name: Nullable(Type.String({ description: 'Null until the invitation is accepted.' })),
  role: Type.String({ enum: [...ROLES] }),
  two_factor: Type.Integer({ minimum: 0, maximum: 1, description: '1: two-factor authentication is on.' }),
  last_sign_in_at: Nullable(Timestamp),
  created_at: Timestamp,
});

export const UserList = ListOf('users', UserShape, "The account's people, newest first (invited ones with `name` null).");

/** The API shape of a person. */
export function toUser(row: PersonRow) {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    two_factor: row.two_factor_secret ? 1 : 0,
    last_sign_in_at: row.last_sign_in_at,
    created_at: row.created_at,
  };
}
export type User = ReturnType<typeof toUser>;
