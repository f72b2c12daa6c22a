import { Type, type TSchema } from '@sinclair/typebox';
import { Email, responses, Success } from '../../http/schemas.js';
import { Secret } from '../../http/secret-fields.js';
import { UserShape } from './users.schema.js';
import { MAX_PASSWORD } from './sessions.passwords.js';

/** `POST /session/sign-in`. */
export const SignInBody = Type.Object({
  email: Email,
  password: Type.String({ minLength: 1, maxLength: MAX_PASSWORD }),
  code: Type.Optional(
    Type.String({ maxLength: 64, description: 'When two-factor authentication is on: the code of the app, or a recovery code.' }),
  ),
});

/** The answer of a session: the person, and the token to send as `X-CSRF-Token` with every change. */
export const SessionAnswer = Success(
  Type.Object({
    user: UserShape,
    csrf_token: Secret(
      Type.String({
        description:
          'Send it as the `X-CSRF-Token` header with every request by this session that may change something (any method but ' +
          'GET and HEAD, and the GET routes that change state); sending it with every request is simplest.',
      }),
    ),
    scopes: Type.Array(Type.String(), {
      description: 'Every scope the person’s role grants (`contacts.read`, `contacts.write`, …): what the person may do.',
    }),
    require_two_factor: Type.Integer({
      minimum: 0,
      maximum: 1,
      description: '1: the account requires two-factor authentication; a person without it may only set it up.',
    }),
  }),
  'The signed-in person and the session’s CSRF token.',
);

const failedText = (description: string) => Type.Object({ status: Type.Literal('failed'), errors: Type.String() }, { description });

/** The answers of a public route of people and sessions: its success, field errors and the failures named. */
export function publicResponses<S extends TSchema>(success: S, named: Record<number, string> = {}) {
  const out: Record<number, TSchema | undefined> = { ...responses(success, 422) };
  delete out[401];
  for (const [code, description] of Object.entries(named)) out[Number(code)] = failedText(description);
  return out;
}
