import type { FastifyInstance, FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import qs from 'qs';

const QS_OPTIONS: qs.IParseOptions = { arrayLimit: 100_000, parameterLimit: 200_000, depth: 5 };

/** Parses a urlencoded body or query string: `strIds[0]` → array, `custom_field[age]` → object. */
export function parseForm(input: string | Record<string, unknown>): Record<string, unknown> {
  return qs.parse(input as string, QS_OPTIONS) as Record<string, unknown>;
}

/**
 * Laravel's input middleware: strings trimmed, empty strings and nulls dropped (so `required`
 * also catches blanks, and an empty optional field means "not given").
 */
export function normalizeInput(value: unknown): unknown {
  if (typeof value === 'string') {
    const t = value.trim();
    return t === '' ? undefined : t;
  }
  if (Array.isArray(value)) return value.map(normalizeInput).filter((v) => v !== undefined);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const n = normalizeInput(v);
      if (n !== undefined) out[k] = n;
    }
    return out;
  }
  return value === null ? undefined : value;
}

/** Reads the fields of a multipart body (files are drained and ignored) into a parsed form. */
async function multipartFields(request: FastifyRequest): Promise<Record<string, unknown>> {
  const flat: Record<string, string | string[]> = {};
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      part.file.resume();
      continue;
    }
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
  await app.register(formbody, { parser: (s: string) => parseForm(s), bodyLimit: 10 * 1024 * 1024 });
  await app.register(multipart, {
    limits: { fileSize: opts.maxFileBytes, files: 1, fields: 10_000, fieldSize: 10 * 1024 * 1024, parts: 10_001 },
  });
  app.addHook('preValidation', async (request) => {
    const raw = request.isMultipart() && request.routeOptions.config.rawMultipart;
    if (!raw) {
      if (request.isMultipart()) request.body = await multipartFields(request);
      request.body = normalizeInput(request.body ?? {}) ?? {};
    }
    request.query = normalizeInput(request.query) ?? {};
  });
}
