import querystring from 'node:querystring';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import qs from 'qs';
import { AppError } from './errors.js';

/** The largest urlencoded, JSON or multipart (fields only) body (contract §1). */
const FORM_LIMIT = 10 * 1024 * 1024;

const QS_OPTIONS: qs.IParseOptions = { arrayLimit: 100_000, parameterLimit: 200_000, depth: 5 };

/** Parses a urlencoded body or query string: `strIds[0]` → array, `custom_field[age]` → object. */
export function parseForm(input: string | Record<string, unknown>): Record<string, unknown> {
  // Most query strings are flat (`?contact_id=5`): read them without qs, several times faster.
  if (typeof input === 'string' && !/\[|%5B/i.test(input)) return parseFlat(input) ?? { ...querystring.parse(input) };
  return qs.parse(input as string, QS_OPTIONS) as Record<string, unknown>;
}

const ESCAPED = /[%+]/;
const unescape = (s: string) => (ESCAPED.test(s) ? querystring.unescape(s.replace(/\+/g, ' ')) : s);

/**
 * A flat `a=1&b=x+y&a=2` string as querystring.parse reads it (repeated names → array, `+` and
 * `%XX` decoded, malformed escapes kept), in a tenth of its time; null for a `__proto__` name.
 */
function parseFlat(input: string): Record<string, string | string[]> | null {
  const out: Record<string, string | string[]> = {};
  for (let start = 0; start < input.length; ) {
    let end = input.indexOf('&', start);
    if (end === -1) end = input.length;
    if (end > start) {
      let eq = input.indexOf('=', start);
      if (eq === -1 || eq > end) eq = end;
      const key = unescape(input.slice(start, eq));
      if (key === '__proto__') return null;
      const value = unescape(input.slice(eq + 1, end));
      const prev = out[key];
      if (prev === undefined) out[key] = value;
      else if (Array.isArray(prev)) prev.push(value);
      else out[key] = [prev, value];
    }
    start = end + 1;
  }
  return out;
}

/** A string without NUL characters: PostgreSQL cannot store them in text (nor read them as JSON). */
function withoutNul(s: string): string {
  return s.includes('\u0000') ? s.replaceAll('\u0000', '') : s;
}

/** Object fields whose members sent empty are kept, as null: in `custom_field`, "clear this value". */
const EMPTY_MEANS_CLEAR = new Set(['custom_field']);

/**
 * Laravel's input middleware: strings trimmed, empty strings and nulls dropped (so `required`
 * also catches blanks, and an empty optional field means "not given"); only the members of
 * `custom_field` sent empty stay, as null, so an update can clear a custom value. NUL characters
 * are removed from values and names first: they mean nothing in any field, and a stored one would
 * fail on PostgreSQL (an error for the request, or every later JSON read of the contact's custom
 * values).
 */
export function normalizeInput(value: unknown, keepEmptyMembers = false): unknown {
  if (typeof value === 'string') {
    const t = withoutNul(value).trim();
    return t === '' ? undefined : t;
  }
  if (Array.isArray(value)) return value.map((v) => normalizeInput(v)).filter((v) => v !== undefined);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const key = withoutNul(k);
      const n = normalizeInput(v, EMPTY_MEANS_CLEAR.has(key));
      if (n !== undefined) out[key] = n;
      else if (keepEmptyMembers && (v === null || typeof v === 'string')) out[key] = null;
    }
    return out;
  }
  return value === null ? undefined : value;
}

/** Reads the fields of a multipart body (files are drained and ignored) into a parsed form. */
async function multipartFields(request: FastifyRequest): Promise<Record<string, unknown>> {
  const flat: Record<string, string | string[]> = {};
  let total = 0;
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      part.file.resume();
      continue;
    }
    // Busboy cuts an over-long field silently; the fields together obey the 10 MB body limit too.
    total += part.fieldname.length + Buffer.byteLength(String(part.value ?? ''));
    if (part.valueTruncated || part.fieldnameTruncated || total > FORM_LIMIT) throw new AppError(413, 'The request body is too large.');
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

/** Registers the body parsers and the input normalisation shared by every route. */
export async function registerBodyParsing(app: FastifyInstance, opts: { maxFileBytes: number }): Promise<void> {
  await app.register(formbody, { parser: (s: string) => parseForm(s), bodyLimit: FORM_LIMIT });
  await app.register(multipart, {
    limits: { fileSize: opts.maxFileBytes, files: 1, fields: 10_000, fieldSize: FORM_LIMIT, parts: 10_001 },
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
    request.query = normalizeInput(request.query) ?? {};
  });
}
