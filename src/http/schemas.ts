import { Type, type TOptional, type TSchema, type TString } from '@sinclair/typebox';

/** A positive integer id in a body. */
export const Id = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });

/** A text field; `max` defaults to 255. */
export const Text = (max = 255) => Type.String({ maxLength: max });

/** A text field that ends up in a mail header: CR and LF are rejected (contract §2). */
export const HeaderText = (max = 255) => Type.String({ maxLength: max, pattern: '^[^\\r\\n]*$' });

/** An email address. */
export const Email = Type.String({ format: 'email', maxLength: 254 });

/**
 * Query identifiers stay text in the schema: the spec answers a missing or malformed id with the
 * endpoint's not-found text, which the service decides through `toId`.
 */
export const QueryIds = <K extends string>(...names: K[]) => {
  const props = {} as Record<K, TOptional<TString>>;
  for (const n of names) props[n] = Type.Optional(Type.String({ maxLength: 64 }));
  return Type.Object(props);
};

/** A query id as a number, or null when missing or not a positive integer. */
export function toId(value: unknown): number | null {
  if (typeof value === 'number') return Number.isInteger(value) && value > 0 && value <= 2_147_483_647 ? value : null;
  if (typeof value !== 'string' || !/^\d{1,10}$/.test(value)) return null;
  const n = Number(value);
  return n > 0 && n <= 2_147_483_647 ? n : null;
}

/** Bulk-delete body: `strIds[0]`, `strIds[1]`, … of record ids. */
export const StrIds = Type.Object({ strIds: Type.Array(Id, { minItems: 1, maxItems: 10_000 }) });

/** Bulk-delete body keyed by utr (single sends, automations). */
export const StrUtrs = Type.Object({ strIds: Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: 10_000 }) });

/** A string from a fixed set (one `enum` keyword, so one clear error). */
export const Enum = <T extends string>(values: readonly T[]) => Type.Unsafe<T>({ type: 'string', enum: [...values] });

/** Optional list paging (contract §5). */
export const Paging = {
  // Bounded so that the row offset, (page - 1) × per_page, stays an integer both engines can bind.
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000 })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
};
export const PagingQuery = Type.Object(Paging);

/** Wraps a route's body and query schemas, so every route declares them the same way. */
export function schema<B extends TSchema | undefined, Q extends TSchema | undefined>(s: { body?: B; querystring?: Q }) {
  return s;
}

/** The success envelope around `message` as a response schema: Fastify compiles it into a serializer. */
export const Success = <T extends TSchema>(message: T) => Type.Object({ status: Type.Literal('success'), message });

/** Field name → messages, as every 422 (and a 401 without key headers) carries them. */
const FieldMessages = Type.Record(Type.String(), Type.Array(Type.String()));

/** `{status:'failed', errors:'<text>'}`. */
export const FailedText = Type.Object({ status: Type.Literal('failed'), errors: Type.String() });

/** `{status:'failed', errors:{<field>:['<message>', …]}}`. */
export const FailedFields = Type.Object({ status: Type.Literal('failed'), errors: FieldMessages });

/** A failure whose `errors` is a text or field messages (401: missing headers or wrong keys). */
export const FailedAny = Type.Object({ status: Type.Literal('failed'), errors: Type.Union([Type.String(), FieldMessages]) });

/** `{status:'success', message:'<text>'}`. */
export const OkText = Success(Type.String());

/** A create's answer: `{status:'success', message:'<text>', id:<new id>}`. */
export const OkCreated = Type.Object({ status: Type.Literal('success'), message: Type.String(), id: Type.Integer() });

/** The deletes whose success text also stands in `errors`. */
export const OkInErrors = Type.Object({ status: Type.Literal('success'), errors: Type.String(), message: Type.String() });

/** Failures any route with keys can answer: a malformed body, wrong keys, too large, too many, a fault. */
const COMMON_FAILURES = { 400: FailedText, 401: FailedAny, 413: FailedText, 429: FailedText, 500: FailedText };

/**
 * A route's `response` schemas: its success body, the failures every authenticated route can
 * answer, and those it names (404 not found, 409 state conflict, 422 field errors). Fastify
 * serialises each response with them, and the OpenAPI document is generated from them.
 */
export function responses<S extends TSchema>(success: S, ...failures: Array<404 | 409 | 422>) {
  const named: Partial<Record<404 | 409 | 422, TSchema>> = {};
  for (const code of failures) named[code] = code === 422 ? FailedFields : FailedText;
  return { 200: success, ...COMMON_FAILURES, ...named };
}
