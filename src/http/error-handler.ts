import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifySchemaValidationError } from 'fastify';
import { AppError, ValidationError, type FieldErrors } from './errors.js';
import { ScopeRefused } from './principal.js';
import { sendGridErrors, speaksSendGrid, V3_FORBIDDEN } from './sendgrid.js';
import { failed } from './envelope.js';
import { fieldErrorsFromAjv } from './messages.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The handler receives schema failures through `schemaErrors(request)` and reports them
     * together with its database rules instead of failing before it runs.
     */
    deferValidation?: boolean;
  }
}

const MALFORMED_MULTIPART = 'The multipart body is malformed.';
// @fastify/multipart refuses these names outright; urlencoded and JSON bodies take them as plain names.
const RESERVED_PART_NAME = 'A multipart field may not be named like a member of every object (toString, constructor, __proto__, …).';

/**
 * The texts of busboy's parse errors, plain Errors without a code or status: no boundary in the
 * content type, an empty or over-long one, a body that ends before its closing boundary.
 */
const BUSBOY_PARSE_ERROR =
  /^(Multipart: Boundary not found|Boundary required|The needle cannot .*|Unexpected end of multipart data|\w+ terminated early due to unexpected end of multipart data)$/;

/** True for an error that says the multipart body is broken (the client's fault, so a 400). */
function isBrokenMultipart(err: FastifyError): boolean {
  if (err.statusCode === undefined && !err.code) return BUSBOY_PARSE_ERROR.test(err.message ?? '');
  return err.code === 'FST_INVALID_JSON_FIELD_ERROR' || err.code === 'FST_MP_PREMATURE_CLOSE';
}

/** Texts for framework errors that reach the handler with a 4xx status. */
function frameworkText(err: FastifyError): string {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_PARTS_LIMIT':
    case 'FST_FILES_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return 'The request body is too large.';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'Unsupported content type: send form fields (urlencoded or multipart) or JSON.';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return 'The request body is not valid JSON.';
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return 'The request body does not match its Content-Length.';
    default:
      return err.statusCode === 413 ? 'The request body is too large.' : 'Bad Request';
  }
}

/**
 * The one error path: every failure leaves as `{status:'failed', errors}` (under `/v3/`, as
 * SendGrid's error list), with a text (or field errors) and never a stack trace; only a failure
 * of the service itself is a 500.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  // Schema failures are attached, not thrown, so deferred routes can merge them with their rules.
  app.addHook('onRoute', (route) => {
    if (route.schema) route.attachValidation = true;
  });
  app.addHook('preHandler', async (request) => {
    const err = (request as { validationError?: FastifyError & { validationContext?: string } }).validationError;
    if (!err?.validation) return;
    if (!request.routeOptions.config.deferValidation) throw new ValidationError(fieldErrorsFromAjv(err.validation));
    // A deferred handler runs despite the failures: it must not see the values that failed.
    if (err.validationContext === 'body') dropFailedValues(request.body, err.validation);
    if (err.validationContext === 'querystring') dropFailedValues(request.query, err.validation);
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const [status, errors, headers] = failureOf(error);
    if (status === 500) request.log.error({ err: error }, 'unhandled error');
    return answer(request, reply.headers(headers), status, errors, error);
  });

  app.setNotFoundHandler((request, reply) => answer(request, reply, 404, 'Route not found'));
}

/** A failure's status, errors (a text or field errors) and headers, whoever raised it. */
function failureOf(error: FastifyError): [number, string | FieldErrors, Record<string, string>] {
  if (error instanceof AppError) return [error.statusCode, error.errors, error.headers];
  if (error.validation) return [422, fieldErrorsFromAjv(error.validation), {}];
  if (error.code === 'FST_PROTO_VIOLATION') return [400, RESERVED_PART_NAME, {}];
  if (isBrokenMultipart(error)) return [400, MALFORMED_MULTIPART, {}];
  const status = error.statusCode ?? 500;
  if (status === 429) return [429, 'Too Many Requests: slow down and retry after the Retry-After seconds.', {}];
  if (status >= 400 && status < 500) {
    // JSON syntax errors and other body parse errors surface here as 400/415/413.
    const code = error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || /TOO_LARGE|LIMIT/.test(error.code ?? '') ? 413 : status;
    return [code, frameworkText(error), {}];
  }
  return [500, 'Internal Server Error', {}];
}

/**
 * Sends a failure: in the envelope, or, under `/v3/`, as SendGrid's error list (field errors are
 * a 400 there, as SendGrid answers them; a key without the scope gets SendGrid's 403 text).
 */
function answer(request: FastifyRequest, reply: FastifyReply, status: number, errors: string | FieldErrors, error?: Error) {
  if (!speaksSendGrid(request.url)) return reply.code(status).send(failed(errors));
  const invalid = status === 422 && (error instanceof ValidationError || !(error instanceof AppError));
  const code = invalid ? 400 : status;
  const text = error instanceof ScopeRefused ? V3_FORBIDDEN : errors;
  return reply.code(code).send(sendGridErrors(code, text, error instanceof AppError ? (error.field ?? null) : null));
}

/**
 * Fastify's `frameworkErrors` option: a URL the router cannot decode (`/%zz`, `/%FF`) or a path
 * parameter over its length, answered in the envelope (under `/v3/`, SendGrid's list) instead of
 * Fastify's own body.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const text = error.code === 'FST_ERR_BAD_URL' ? 'The URL has a malformed percent-encoding.' : 'The URL is not valid.';
  void answer(request, reply, error.statusCode && error.statusCode < 500 ? error.statusCode : 400, text);
}

/**
 * Fastify's `clientErrorHandler` option: a request Node's HTTP parser refuses (a malformed
 * request line or header, contradictory lengths, headers too large, too slow), answered in the
 * envelope on the raw socket, which then closes once the answer is written.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, text] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'The request headers are too large.']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'The request took too long to arrive.']
        : [400, 'The request is not valid HTTP.'];
  const body = JSON.stringify(failed(text));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroySoon();
}

/**
 * Removes from a deferred route's input every value that failed its schema (an object where text
 * belongs, `Infinity` where an integer does, …): they are reported from `schemaErrors`, and the
 * handler and its service see the request as if they had not been sent, so code typed by the
 * schema never meets a value of another type (nor hands it to the database). A failing member of
 * an object goes alone (`custom_field.age`); an array with a failing element goes whole.
 */
export function dropFailedValues(input: unknown, errors: readonly FastifySchemaValidationError[]): void {
  for (const e of errors) {
    if (e.keyword === 'required' || !e.instancePath) continue;
    const path = e.instancePath
      .split('/')
      .slice(1)
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    let container = input;
    for (let i = 0; i < path.length; i++) {
      if (container === null || typeof container !== 'object' || Array.isArray(container)) break;
      const record = container as Record<string, unknown>;
      const value = record[path[i]];
      if (i === path.length - 1 || Array.isArray(value)) {
        delete record[path[i]];
        break;
      }
      container = value;
    }
  }
}

/** The schema failures of a deferred route (see `deferValidation`), as field errors. */
export function schemaErrors(request: {
  validationError?: Error & { validation?: FastifySchemaValidationError[] };
}): Record<string, string[]> {
  const v = request.validationError?.validation;
  return v ? fieldErrorsFromAjv(v) : {};
}
