import * as crypto from 'node:crypto';
import { createHash, type Hash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { Multipart } from '@fastify/multipart';
import { Type, type TSchema } from '@sinclair/typebox';
import { AppError, ValidationError } from './errors.js';
import { SendGridFailure, speaksSendGrid } from './sendgrid.js';
import { FailedFields } from './schemas.js';
import type { Database } from '../db/index.js';
import type { Clock } from '../util/clock.js';
import { isoMicros } from '../util/time.js';
import { keyStore, type KeyStore } from './idempotency.store.js';
import { routeSecretPaths, withoutSecrets, type PathStep } from './secret-fields.js';

export { KEY_IN_PROGRESS } from './idempotency.store.js';

/** The request header that names a keyed POST's key, and the header every replayed answer carries. */
export const IDEMPOTENCY_KEY = 'Idempotency-Key';
export const IDEMPOTENT_REPLAYED = 'Idempotent-Replayed';

/** 1 to 255 visible ASCII characters (no space, no control character). */
const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;
/** The answer headers kept and replayed with the body; the rest (length, encoding, limits) is the moment's. */
const KEPT_HEADERS = ['content-type', 'content-disposition', 'location'];

export const KEY_INVALID = 'The idempotency key format is invalid.';
export const KEY_REUSED = 'Idempotency-Key reused with a different request';

/** The 422 of a key reused with another request: a text, as the 409 of a key in use. */
const KeyReused = Type.Object(
  { status: Type.Literal('failed'), errors: Type.Literal(KEY_REUSED) },
  { description: `\`${IDEMPOTENCY_KEY}\` reused with another request (method, URL or body): \`${KEY_REUSED}\`; nothing done.` },
);

/**
 * A keyed POST's 422 answers: the route's own (field errors: its fields, or a malformed key under
 * the header's name) or the text of a reused key; under `/v3/`, SendGrid's error list. Set on the
 * route, as it serialises its answers.
 */
function keyed422(route: RouteOptions): void {
  const response = route.schema?.response as Record<string, TSchema> | undefined;
  if (!response) return;
  if (speaksSendGrid(route.url)) {
    const reused = SendGridFailure(`\`${IDEMPOTENCY_KEY}\` reused with another request: \`${KEY_REUSED}\`, field \`${IDEMPOTENCY_KEY}\`.`);
    route.schema = { ...route.schema, response: { ...response, 422: reused } };
    return;
  }
  const own = response['422'] ?? FailedFields;
  route.schema = { ...route.schema, response: { ...response, 422: Type.Union([own, KeyReused], { description: own.description }) } };
}

/** What one keyed request carries from hook to hook. */
interface Keyed {
  key: string;
  /** The fingerprint: text once known; a hash still fed while a streamed upload is read. */
  fingerprint: string | Hash;
  /** For a streamed upload: whether its parts were read to the end (only then is the fingerprint whole). */
  streamed: { complete: boolean } | null;
  /** Set once this request holds the key: the claim time that identifies its claim. */
  claimedAt: string | null;
}

const keyed = new WeakMap<FastifyRequest, Keyed>();

/** SHA-256 of a text, base64url: Node's one-shot `crypto.hash` where there is one (20.12+), else a Hash. */
const sha256: (text: string) => string =
  typeof (crypto as { hash?: unknown }).hash === 'function'
    ? (text) => (crypto as unknown as { hash: (a: string, d: string, e: string) => string }).hash('sha256', text, 'base64url')
    : (text) => createHash('sha256').update(text).digest('base64url');

function addHook(route: RouteOptions, name: 'preValidation' | 'onSend', hook: unknown, first = false): void {
  const r = route as unknown as Record<string, unknown>;
  const existing = r[name] === undefined ? [] : Array.isArray(r[name]) ? (r[name] as unknown[]) : [r[name]];
  r[name] = first ? [hook, ...existing] : [...existing, hook];
}

/**
 * Idempotency keys on every keyed POST (see docs/idempotency.md). A request with
 * `Idempotency-Key` claims the key for its account with one insert before its body is checked
 * against the route's schema; its answer (status, body, content type; a 4xx too) is stored in
 * `onSend`, one update, and given again with `Idempotent-Replayed: true` to the same request with
 * the same key for 24 hours. The same key on another request: 422; while the first still runs:
 * 409; a 5xx answer is not kept (the key is released). Requests without the header are untouched.
 *
 * The hooks are the route's own, added to each keyed POST route as it is declared (register before
 * the routes, after the rate limiter): they run after the account is known, the body is read and
 * a rate-limited request was refused (which claims nothing), before the schema's verdict (so a
 * 422 of the schema is the kept answer too), and `onSend` before compression.
 */
export function registerIdempotency(app: FastifyInstance, deps: { database: Database; clock: Clock }): void {
  const store = keyStore(deps.database, deps.clock);
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    // A signed-in person's own routes (sign-out, password, two-factor) take no key: keys are kept per
    // account, and another person's answer given again would be wrong.
    if (!methods.includes('POST') || route.config?.public || route.config?.sessionOnly) return;
    keyed422(route);
    // The fields its answers' schemas mark as secret (`x-secret`): never kept, so a replay never gives one.
    const secrets = routeSecretPaths(route.schema?.response);
    addHook(route, 'preValidation', readKey);
    addHook(route, 'preValidation', (request: FastifyRequest, reply: FastifyReply) => claimOrAnswer(store, request, reply));
    // First of the route's own onSend hooks: before compression turns the body into a stream.
    addHook(
      route,
      'onSend',
      (request: FastifyRequest, reply: FastifyReply, payload: unknown) => keepAnswer(store, secrets, request, reply, payload),
      true,
    );
  });
}

/** Checks the header and starts the request's fingerprint: method, URL and the fields as the service reads them. */
async function readKey(request: FastifyRequest): Promise<void> {
  if (request.method !== 'POST') return;
  const header = request.headers['idempotency-key'];
  if (header === undefined) return;
  // Node joins a repeated header with ", ": a space, so two keys are refused like any malformed one.
  const key = Array.isArray(header) ? header.join(', ') : header;
  if (!KEY_FORMAT.test(key)) throw new ValidationError({ [IDEMPOTENCY_KEY]: [KEY_INVALID] });
  const head = `${request.method} ${request.url}\n`;
  if (request.isMultipart() && request.routeOptions.config.rawMultipart) {
    // The upload reads its own multipart stream: the fingerprint follows it (fingerprintParts).
    const streamed = { complete: false };
    const hash = createHash('sha256').update(head);
    fingerprintParts(request, hash, streamed);
    keyed.set(request, { key, fingerprint: hash, streamed, claimedAt: null });
    return;
  }
  // The parsed, normalised fields: the same fields urlencoded, multipart (any boundary) or JSON are one request.
  const fingerprint = sha256(head + JSON.stringify(request.body ?? null));
  keyed.set(request, { key, fingerprint, streamed: null, claimedAt: null });
}

/**
 * For a route that reads its multipart body itself: `request.parts()` is wrapped so that every
 * field (name, value) and file (name, filename, bytes) read feeds the fingerprint, and
 * `streamed.complete` says when the route read the last part. A file stream is paused before the
 * fingerprint listens, so listening does not start the flow: the route's reader does.
 */
function fingerprintParts(request: FastifyRequest, hash: Hash, streamed: { complete: boolean }): void {
  const original = request.parts.bind(request);
  const parts = async function* (...args: Parameters<typeof original>): AsyncIterableIterator<Multipart> {
    for await (const part of original(...args)) {
      if (part.type === 'file') {
        hash.update(`\0file\0${part.fieldname}\0${part.filename}\0`);
        part.file.pause();
        part.file.on('data', (chunk: Buffer) => hash.update(chunk));
      } else hash.update(`\0field\0${part.fieldname}\0${String(part.value ?? '')}\0`);
      yield part;
    }
    streamed.complete = true;
  };
  request.parts = parts as typeof request.parts;
}

/** The fingerprint when whole: null for a streamed upload its route did not read to the end. */
function fingerprintOf(k: Keyed): string | null {
  if (typeof k.fingerprint === 'string') return k.fingerprint;
  if (!k.streamed?.complete) return null;
  k.fingerprint = k.fingerprint.digest('base64url');
  return k.fingerprint;
}

/** Reads what is left of a streamed upload, so that its fingerprint is whole. */
async function drainParts(request: FastifyRequest): Promise<void> {
  for await (const part of request.parts()) if (part.type === 'file') part.file.resume();
}

/** preValidation: claims the key, or answers for it (a replay, 409 or 422) so the handler does not run. */
async function claimOrAnswer(store: KeyStore, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  const k = keyed.get(request);
  if (!k) return;
  const claimedAt = isoMicros(store.clock.now());
  const result = await store.claim(request.userId, k.key, typeof k.fingerprint === 'string' ? k.fingerprint : null, claimedAt);
  if (result.claimed) {
    k.claimedAt = claimedAt;
    return;
  }
  if (k.streamed) await drainParts(request);
  // A text, like the 409: the header is well formed, it names another request.
  if (fingerprintOf(k) !== result.done.request_hash) throw Object.assign(new AppError(422, KEY_REUSED), { field: IDEMPOTENCY_KEY });
  const headers = JSON.parse(result.done.headers ?? '{}') as Record<string, string>;
  return reply
    .code(result.done.status!)
    .headers(headers)
    .header(IDEMPOTENT_REPLAYED, 'true')
    .send(result.done.body ?? '');
}

/**
 * onSend: keeps the answer of a request that holds its key, without the fields its schema marks
 * as secret (kept as null). Not kept, and the key released so a retry runs again: a 5xx; an answer
 * streamed as it is produced (a whole list: nothing changed); a streamed upload its route did not
 * read to the end (refused before anything was done); an answer whose secrets cannot be taken out
 * (not JSON).
 */
async function keepAnswer(
  store: KeyStore,
  secrets: readonly PathStep[][],
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
): Promise<unknown> {
  const k = keyed.get(request);
  if (!k?.claimedAt) return payload;
  const claimedAt = k.claimedAt;
  k.claimedAt = null;
  const fingerprint = fingerprintOf(k);
  const status = reply.statusCode;
  const sent = payload === undefined || payload === null ? '' : typeof payload === 'string' ? payload : null;
  const body = sent === null ? null : withoutSecrets(sent, secrets);
  try {
    if (status >= 500 || body === null || fingerprint === null) await store.release(request.userId, k.key, claimedAt);
    else {
      const headers: Record<string, string> = {};
      for (const name of KEPT_HEADERS) {
        const v = reply.getHeader(name);
        if (v !== undefined) headers[name] = String(v);
      }
      await store.finish(request.userId, k.key, claimedAt, { request_hash: fingerprint, status, headers: JSON.stringify(headers), body });
    }
  } catch (err) {
    // The answer still goes out; the key stays `running` until it counts as abandoned.
    request.log.error({ err }, 'idempotency key not stored');
  }
  return payload;
}
