import type { Socket } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import fastQuerystring from 'fast-querystring';
import { AppError } from './errors.js';
import { MAX_FIELDS, parseBracketed, piecesOf, TOO_MANY_FIELDS } from './form-fields.js';

/** The largest urlencoded, JSON or multipart body; on the CSV upload, room for the fields beside the file. */
export const FORM_LIMIT = 10 * 1024 * 1024;

/**
 * The largest body of a public route (no key): a sign-up form, a confirmation or preferences
 * post holds a few fields, a few KB. Routes that take more say so with their own `bodyLimit`.
 */
export const PUBLIC_BODY_LIMIT = 64 * 1024;

/** The largest relay webhook body: SendGrid posts batches of up to 768 KB, SNS messages are at most 256 KB. */
export const RELAY_BODY_LIMIT = 5 * 1024 * 1024;

const TOO_LARGE = 'The request body is too large.';

/**
 * Parses a urlencoded body or query string: `strIds[0]` → array, `custom_field[age]` → object,
 * in time linear in its length; more than MAX_FIELDS fields is a 413 (see form-fields.ts).
 * Flat strings (`?contact_id=5`, most queries) go to fast-querystring, Fastify's own parser; it
 * reads them as Node's querystring does, except that a value with a malformed escape (`%zz`,
 * `%FF`) is kept as sent, as the bracketed reading keeps it, instead of being turned into U+FFFD.
 * Every object returned has no prototype.
 */
export function parseForm(input: string | Record<string, string | string[]>): Record<string, unknown> {
  if (typeof input === 'string' && !/\[|%5B/i.test(input)) {
    piecesOf(input);
    return fastQuerystring.parse(input) as Record<string, unknown>;
  }
  return parseBracketed(input);
}

/** Marks a query string with too many fields; the preValidation hook answers it with the 413. */
const TOO_MANY_IN_QUERY = Symbol('too many fields');

/**
 * Parses a query string as `parseForm` does, but never throws: Fastify parses the query while
 * routing, where an exception would escape the request handler. A query with too many fields
 * (possible only when Node's header limit is raised) reads as marked, and is refused before validation.
 */
export function parseQuery(input: string): Record<string, unknown> {
  try {
    return parseForm(input);
  } catch {
    return { [TOO_MANY_IN_QUERY]: true };
  }
}

/** A string without NUL characters: PostgreSQL cannot store them in text (nor read them as JSON). */
function withoutNul(s: string): string {
  return s.includes('\u0000') ? s.replaceAll('\u0000', '') : s;
}

/** The deepest nesting of fields read; deeper is a 400 (and never a stack overflow). */
const MAX_DEPTH = 32;

/** Object fields whose members sent empty are kept, as null: in `custom_field`, "clear this value". */
const EMPTY_MEANS_CLEAR = new Set(['custom_field']);

/**
 * Laravel's input middleware: strings trimmed, empty strings and nulls dropped (so `required`
 * also catches blanks, and an empty optional field means "not given"); only the members of
 * `custom_field` sent empty stay, as null, so an update can clear a custom value. NUL characters
 * are removed from values and names first: they mean nothing in any field, and a stored one would
 * fail on PostgreSQL (an error for the request, or every later JSON read of the contact's custom
 * values). Objects come out without a prototype, and a `__proto__` name is dropped.
 */
export function normalizeInput(value: unknown, keepEmptyMembers = false, depth = 0): unknown {
  if (typeof value === 'string') {
    const t = withoutNul(value).trim();
    return t === '' ? undefined : t;
  }
  if (value === null || typeof value !== 'object') return value === null ? undefined : value;
  // No field nests this deep (a form's are cut at 5 levels); JSON may nest without end.
  if (depth >= MAX_DEPTH) throw new AppError(400, `The request nests fields more than ${MAX_DEPTH} levels deep.`);
  if (Array.isArray(value)) return value.map((v) => normalizeInput(v, false, depth + 1)).filter((v) => v !== undefined);
  // No prototype: a field named `constructor` or `toString` is only ever what the client sent.
  const out: Record<string, unknown> = Object.create(null);
  for (const [k, v] of Object.entries(value)) {
    const key = withoutNul(k);
    if (key === '__proto__') continue;
    const n = normalizeInput(v, EMPTY_MEANS_CLEAR.has(key), depth + 1);
    if (n !== undefined) out[key] = n;
    else if (keepEmptyMembers && (v === null || typeof v === 'string')) out[key] = null;
  }
  return out;
}

/** Reads the fields of a multipart body (files are drained and ignored) into a parsed form. */
async function multipartFields(request: FastifyRequest): Promise<Record<string, unknown>> {
  const flat: Record<string, string | string[]> = Object.create(null);
  const limit = request.routeOptions.bodyLimit;
  let total = 0;
  for await (const part of request.parts()) {
    total += part.fieldname.length;
    if (part.type === 'file') {
      // A file the route does not take is dropped, but its bytes count against the body limit.
      for await (const chunk of part.file) {
        total += (chunk as Buffer).length;
        if (total > limit) throw new AppError(413, TOO_LARGE);
      }
      continue;
    }
    // Busboy cuts an over-long field silently; the fields together obey the route's body limit too.
    total += Buffer.byteLength(String(part.value ?? ''));
    if (part.valueTruncated || part.fieldnameTruncated || total > limit) throw new AppError(413, TOO_LARGE);
    const value = String(part.value ?? '');
    const prev = flat[part.fieldname];
    flat[part.fieldname] = prev === undefined ? value : ([] as string[]).concat(prev, value);
  }
  return parseForm(flat);
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The handler reads the multipart stream itself (file uploads). */
    rawMultipart?: boolean;
  }
}

/** How long a connection closed under a still-arriving body keeps reading before it is dropped. */
const LINGER_MS = 2000;

/**
 * Closes the connection of a request whose body is still arriving without resetting it, so that
 * the client reads the answer. Node closes a `Connection: close` socket with `destroySoon()` once
 * the response is written; closing while the client still sends makes the kernel answer with a
 * reset, and a client busy writing then sees the reset instead of the answer waiting in its
 * buffer. So, as web servers do ("lingering close"), this socket ends its side after the response,
 * keeps reading and dropping what arrives until the client stops or LINGER_MS pass, then closes.
 * `destroySoon` is what Node 20's server calls on such a socket (not a documented hook): the real
 * connection tests in test/http/limits.test.ts fail with EPIPE the day it stops being called.
 */
function closeLingering(raw: IncomingMessage): void {
  const socket = raw.socket as (Socket & { destroySoon?: () => void }) | null;
  if (!socket || typeof socket.destroySoon !== 'function') return;
  socket.destroySoon = function lingeringClose(this: Socket) {
    raw.unpipe();
    raw.resume();
    const timer = setTimeout(() => this.destroy(), LINGER_MS).unref();
    this.once('close', () => clearTimeout(timer));
    this.end();
    this.resume();
  };
}

/** True when the request announced a body that has not all arrived yet. */
function bodyPending(raw: IncomingMessage): boolean {
  return raw.complete === false && (raw.headers['transfer-encoding'] !== undefined || Number(raw.headers['content-length']) > 0);
}

/**
 * Answers an oversized body before reading it. A public route (`config.public`) takes at most
 * PUBLIC_BODY_LIMIT unless it sets its own `bodyLimit`; the route's limit also cuts a body
 * streamed without a length, in Fastify's reader. A `Content-Length` over the route's limit is a 413
 * at once, and a client that asked `Expect: 100-continue` gets the 413 instead of the go-ahead
 * (the go-ahead only once the key check and this one passed). A body that turns out too large
 * while streaming is cut by its parser. Either way the answer leaves with `Connection: close` and
 * a lingering close, so the client still sending receives it.
 */
function registerBodyLimits(app: FastifyInstance, maxFileBytes: number): void {
  const awaitingContinue = new WeakSet<IncomingMessage>();
  // With a listener, Node no longer answers 100 Continue by itself: the preParsing hook decides.
  app.server.on('checkContinue', (req: IncomingMessage, res) => {
    awaitingContinue.add(req);
    app.server.emit('request', req, res);
  });
  // Anyone may post to a public route: a small limit there, unless the route asks for more.
  app.addHook('onRoute', (route) => {
    if (route.config?.public && route.bodyLimit === undefined) route.bodyLimit = PUBLIC_BODY_LIMIT;
  });
  app.addHook('preParsing', (request, reply, payload, done) => {
    const fields = request.routeOptions.bodyLimit;
    const limit = request.routeOptions.config.rawMultipart ? maxFileBytes + fields : fields;
    if (Number(request.headers['content-length']) > limit) return done(new AppError(413, TOO_LARGE));
    if (awaitingContinue.delete(request.raw)) reply.raw.writeContinue();
    done(null, payload);
  });
  app.addHook('onSend', (request, reply: FastifyReply, payload, done) => {
    if (bodyPending(request.raw)) {
      reply.header('connection', 'close');
      closeLingering(request.raw);
    }
    done(null, payload);
  });
}

/** Registers the body parsers, their limits and the input normalisation shared by every route. */
export async function registerBodyParsing(app: FastifyInstance, opts: { maxFileBytes: number }): Promise<void> {
  registerBodyLimits(app, opts.maxFileBytes);
  await app.register(formbody, { parser: (s: string) => parseForm(s), bodyLimit: FORM_LIMIT });
  await app.register(multipart, {
    limits: { fileSize: opts.maxFileBytes, files: 1, fields: MAX_FIELDS, fieldSize: FORM_LIMIT, parts: MAX_FIELDS + 1 },
  });
  // Clients that send `Content-Type: application/json` on every request, DELETE included, send
  // empty bodies too: that is "no fields", not malformed JSON.
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (request, body, done) => {
    if ((body as string).trim() === '') return done(null, {});
    json(request, body as string, done);
  });
  app.addHook('preValidation', async (request) => {
    const raw = request.isMultipart() && request.routeOptions.config.rawMultipart;
    if (!raw) {
      if (request.isMultipart()) request.body = await multipartFields(request);
      const body = normalizeInput(request.body ?? {}) ?? {};
      // Form fields are always an object; a JSON array or scalar cannot carry them.
      if (typeof body !== 'object' || Array.isArray(body)) {
        if (request.routeOptions.schema?.body) throw new AppError(400, 'The request body must be an object of fields.');
        request.body = {};
      } else request.body = body;
    }
    if ((request.query as Record<symbol, unknown>)?.[TOO_MANY_IN_QUERY]) throw new AppError(413, TOO_MANY_FIELDS);
    request.query = normalizeInput(request.query) ?? {};
  });
}
