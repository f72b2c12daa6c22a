/**
 * Routes under `/v3/` speak SendGrid's v3 interface, so that its clients work with only their base
 * URL changed: their failures are `{"errors":[{"message","field","help"}]}` instead of the
 * envelope. The one error handler renders them (a branch by path prefix); routes only declare the
 * schemas below.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import type { FieldErrors } from './errors.js';

/** The path prefix of the SendGrid-compatible routes. */
export const V3_PREFIX = '/v3/';

/** The 401 of a request under `/v3/` without a valid key (SendGrid's text). */
export const V3_UNAUTHORIZED = 'The provided authorization grant is invalid, expired, or revoked';
/** The 403 of a key without the route's scope (SendGrid's text). */
export const V3_FORBIDDEN = 'access forbidden';
/** The 404 of a record of another account, or of none (SendGrid's text). */
export const V3_NOT_FOUND = 'resource not found';
/** The 429 of a caller over the rate limit (SendGrid's text). */
export const V3_TOO_MANY = 'too many requests';

/** Whether a request path (with or without its query) is one of the SendGrid-compatible routes. */
export function speaksSendGrid(url: string): boolean {
  return url.startsWith(V3_PREFIX) || url === '/v3' || url.startsWith('/v3?');
}

/** One entry of SendGrid's error list. */
export interface SendGridError {
  message: string;
  field: string | null;
  help?: null;
}

/**
 * A failure as SendGrid's error list: a text becomes one entry without a field (401, 403, 404 and
 * 429 take SendGrid's own texts, which its clients and users know); field errors become one entry
 * per message, `field` the dotted path (`versions.0.subject`), `help` null.
 */
export function sendGridErrors(status: number, errors: string | FieldErrors, field: string | null = null): { errors: SendGridError[] } {
  if (typeof errors === 'string') {
    const text = status === 401 ? V3_UNAUTHORIZED : status === 404 ? V3_NOT_FOUND : status === 429 ? V3_TOO_MANY : errors;
    return { errors: [{ field, message: text }] };
  }
  if (status === 401) return { errors: [{ field: null, message: V3_UNAUTHORIZED }] };
  return { errors: Object.entries(errors).flatMap(([f, list]) => list.map((message) => ({ message, field: f, help: null }))) };
}

/** SendGrid's error list, as a response schema. */
export const SendGridFailure = (description: string) =>
  Type.Object(
    {
      errors: Type.Array(
        Type.Object({
          message: Type.String(),
          field: Type.Union([Type.String(), Type.Null()], {
            description: 'The failing field, as a dotted path; null when the request as a whole failed.',
          }),
          help: Type.Optional(Type.Null()),
        }),
      ),
    },
    { description },
  );

/** The 403 of a key without the route's scope, as documented on every `/v3/` route. */
export const V3Forbidden = (scope: string) =>
  SendGridFailure(`The key or person lacks the scope \`${scope}\` (or, by session, the CSRF token): \`${V3_FORBIDDEN}\`.`);

const V3_COMMON = {
  400: SendGridFailure(
    'Invalid request: one entry per problem, `field` naming it (`name`, `subject`, …), or `field` null for a body that is not JSON.',
  ),
  401: SendGridFailure(`No key, or a wrong, revoked or malformed one: \`${V3_UNAUTHORIZED}\`.`),
  413: SendGridFailure('The request body is over the size limit; nothing of it is kept.'),
  415: SendGridFailure('Unsupported content type: send JSON.'),
  429: SendGridFailure(`Rate limited: \`${V3_TOO_MANY}\`; retry after the \`Retry-After\` seconds.`),
  500: SendGridFailure('Unexpected failure (the cause is logged, never sent).'),
};

/**
 * A `/v3/` route's `response` schemas: its success (status and body, or null for no body) and
 * SendGrid's error lists for every failure, 404 when the route names a record.
 */
export function v3Responses(code: 200 | 201 | 202 | 204, success: TSchema | null, opts: { notFound?: boolean } = {}) {
  const ok = success ?? Type.Null({ description: 'No body.' });
  return {
    [code]: ok,
    ...V3_COMMON,
    ...(opts.notFound ? { 404: SendGridFailure(`No such record in this account: \`${V3_NOT_FOUND}\`.`) } : {}),
  };
}
