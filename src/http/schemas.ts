import type { Ajv, AnySchemaObject, ErrorObject } from 'ajv';
import { Type, type IntegerOptions, type ObjectOptions, type TOptional, type TSchema, type TString } from '@sinclair/typebox';

/**
 * The schema keyword that refuses a number that is not finite. AJV's type coercion reads the
 * text `Infinity` (or `1e999`) as a number that passes `type: 'integer'`, and `minimum` and
 * `maximum` skip non-finite numbers, so without it such a value would reach the service and the
 * database. Every integer field of a request carries it (see `Int`); the AJV plugin below gives it
 * its meaning, and its failure reads like the type's: `The <label> must be an integer.`
 */
export const FINITE = 'x-finite';

/** A plugin for the AJV of the routes' validation (Fastify's `ajv.plugins`): defines the `FINITE` keyword. */
export function finiteNumbers(ajv: Ajv): Ajv {
  const validate: { (enabled: boolean, data: unknown, parentSchema?: AnySchemaObject): boolean; errors?: Array<Partial<ErrorObject>> } = (
    enabled,
    data,
    parentSchema,
  ) => {
    if (!enabled || typeof data !== 'number' || Number.isFinite(data)) return true;
    validate.errors = [{ keyword: 'type', params: { type: parentSchema?.type ?? 'number' }, message: 'must be a finite number' }];
    return false;
  };
  return ajv.addKeyword({ keyword: FINITE, schemaType: 'boolean', errors: true, validate });
}

/** The largest id: PostgreSQL's `integer` columns are 32-bit. */
export const MAX_ID = 2_147_483_647;

/**
 * An integer field of a request: never Infinity (see `FINITE`). Give it a `maximum` unless the
 * service decides an out-of-range value itself (`isDbId`, `toId`) before it reaches the database.
 */
export const Int = (options: IntegerOptions = {}) => Type.Integer({ ...options, [FINITE]: true });

/** A positive integer id in a body. */
export const Id = Int({ minimum: 1, maximum: MAX_ID });

/** A text field; `max` defaults to 255. */
export const Text = (max = 255) => Type.String({ maxLength: max });

/** A text field that ends up in a mail header: CR and LF are rejected (no header injection). */
export const HeaderText = (max = 255) => Type.String({ maxLength: max, pattern: '^[^\\r\\n]*$' });

/** A value or null (a response field that may be empty). */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** An email address. */
export const Email = Type.String({ format: 'email', maxLength: 254 });

/**
 * Query identifiers stay text in the schema: a missing or malformed id is answered with the
 * endpoint's not-found text, which the service decides through `toId`.
 */
export const QueryIds = <K extends string>(...names: K[]) => {
  const props = {} as Record<K, TOptional<TString>>;
  for (const n of names) props[n] = Type.Optional(Type.String({ maxLength: 64 }));
  return Type.Object(props);
};

/** A query id as a number, or null when missing or not a positive integer. */
export function toId(value: unknown): number | null {
  if (typeof value === 'number') return Number.isInteger(value) && value > 0 && value <= MAX_ID ? value : null;
  if (typeof value !== 'string' || !/^\d{1,10}$/.test(value)) return null;
  const n = Number(value);
  return n > 0 && n <= MAX_ID ? n : null;
}

/** A utr (single sends, automations) as the query or body gave it: text, or null when missing or empty. */
export const utrOf = (value: unknown): string | null => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null);

/** Bulk-delete body: `strIds[0]`, `strIds[1]`, … of record ids. */
export const StrIds = Type.Object({ strIds: Type.Array(Id, { minItems: 1, maxItems: 10_000 }) });

/** Bulk-delete body keyed by utr (single sends, automations). */
export const StrUtrs = Type.Object({ strIds: Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: 10_000 }) });

/** A string from a fixed set (one `enum` keyword, so one clear error). */
export const Enum = <T extends string>(values: readonly T[]) => Type.Unsafe<T>({ type: 'string', enum: [...values] });

/** Optional list paging: without it a list streams every record. */
export const Paging = {
  // Bounded so that the row offset, (page - 1) × per_page, stays an integer both engines can bind.
  page: Type.Optional(Int({ minimum: 1, maximum: 1_000_000_000 })),
  per_page: Type.Optional(Int({ minimum: 1, maximum: 1000 })),
};
export const PagingQuery = Type.Object(Paging);

/** Wraps a route's body and query schemas, so every route declares them the same way. */
export function schema<B extends TSchema | undefined, Q extends TSchema | undefined>(s: { body?: B; querystring?: Q }) {
  return s;
}

/** The success envelope around `message` as a response schema: Fastify compiles it into a serializer. */
export const Success = <T extends TSchema>(message: T, options: string | ObjectOptions = 'Success') =>
  Type.Object({ status: Type.Literal('success'), message }, typeof options === 'string' ? { description: options } : options);

/** A record's `created_at`, `updated_at` or `deleted_at`: UTC text with microseconds. */
export const Timestamp = Type.String({ description: 'UTC, `YYYY-MM-DDTHH:MM:SS.ffffffZ`' });

/** The `meta` of a list page. */
const PageMeta = Type.Object(
  {
    page: Type.Integer({ minimum: 1 }),
    per_page: Type.Integer({ minimum: 1 }),
    total: Type.Integer({ minimum: 0, description: 'Live records in the whole list.' }),
  },
  { description: 'Present when the query asks for a page (`page` or `per_page`).' },
);

/**
 * The `message` of a list: `{[key]: [item, …]}`, newest first; the whole list, or with `page` or
 * `per_page` in the query one page and its `meta`.
 */
export const ListMessage = <T extends TSchema>(key: string, item: T) =>
  Type.Object({ [key]: Type.Array(item), meta: Type.Optional(PageMeta) });

/** Field name → messages, as every 422 (and a 401 without key headers) carries them. */
export const FieldMessages = Type.Record(Type.String(), Type.Array(Type.String()), {
  description: 'Each failing field (nested ones with dots: `custom_field.age`, `strIds.0`) with its messages.',
});

const failedText = (description: string) => Type.Object({ status: Type.Literal('failed'), errors: Type.String() }, { description });
const failedFields = (description: string) => Type.Object({ status: Type.Literal('failed'), errors: FieldMessages }, { description });

/** `{status:'failed', errors:'<text>'}`. */
export const FailedText = failedText('Failure, with a text saying why.');

/** `{status:'failed', errors:{<field>:['<message>', …]}}`. */
export const FailedFields = failedFields('Validation failed: every failing field with its messages, all reported together.');

/** A failure whose `errors` is a text or field messages (401: missing headers or wrong keys). */
export const FailedAny = Type.Object(
  { status: Type.Literal('failed'), errors: Type.Union([Type.String(), FieldMessages]) },
  {
    description:
      'Not authenticated: without the key headers, `errors` names each missing one (`{"PublicKey":["The public key field is required."]}`); ' +
      'with a wrong key or a disabled account it is the text `Invalid API credentials`.',
  },
);

/** `{status:'success', message:'<text>'}`. */
export const OkText = Success(Type.String());

/** A create's answer: `{status:'success', message:'<text>', id:<new id>}`. */
export const OkCreated = Type.Object(
  { status: Type.Literal('success'), message: Type.String(), id: Type.Integer({ description: "The new record's id." }) },
  { description: 'Created.' },
);

/** The deletes whose success text also stands in `errors` (clients of the original service read either key). */
export const OkInErrors = Type.Object(
  { status: Type.Literal('success'), errors: Type.String(), message: Type.String() },
  { description: 'Deleted: the success text stands in both `message` and `errors`.' },
);

/** A 304 answer to `If-None-Match`: no body. */
export const NotModified = Type.Null({ description: 'Not modified: the `If-None-Match` tag is still current; no body.' });

/** Failures any route with keys can answer: a malformed body, wrong keys, too large, too many, a fault. */
const COMMON_FAILURES = {
  400: failedText('Malformed request: invalid JSON, a JSON body that is not an object of fields, or a broken multipart body.'),
  401: FailedAny,
  413: failedText('The request body (or the uploaded file) is over the size limit; nothing of it is kept.'),
  415: failedText('Unsupported content type: send form fields (urlencoded or multipart) or JSON.'),
  429: failedText(
    'Rate limited: too many requests this minute for the key or person (or a password check held back); retry after the `Retry-After` seconds.',
  ),
  500: failedText('Unexpected failure: `Internal Server Error` (the cause is logged, never sent).'),
};

const NAMED_FAILURES = {
  404: failedText('Not found: no such record in this account (`Record Not Found`, or the spelling this endpoint uses).'),
  409: failedText('Conflict: the record cannot change in its current state; the text says why.'),
  422: FailedFields,
};

/**
 * A route's `response` schemas: its success body, the failures every authenticated route can
 * answer, and those it names (404 not found, 409 state conflict, 422 field errors). Fastify
 * serialises each response with them, and the OpenAPI document is generated from them.
 */
export function responses<S extends TSchema>(success: S, ...failures: Array<404 | 409 | 422>) {
  const named: Partial<Record<404 | 409 | 422, TSchema>> = {};
  for (const code of failures) named[code] = NAMED_FAILURES[code];
  return { 200: success, ...COMMON_FAILURES, ...named };
}

/**
 * A list's success body: `{status:'success', message:{<key>:[…], meta?}}`. Without `page` and
 * `per_page` the whole list streams (built by `sendList`, not by this serializer) in this shape
 * without `meta`; a paged answer is serialised with it.
 */
export const ListOf = <T extends TSchema>(key: string, item: T, description = 'The records, newest first.') =>
  Success(ListMessage(key, item), description);

/**
 * A response that is not JSON (a CSV file, an image, an HTML page), documented with its media
 * type. Its body is sent as text or bytes, so no serializer uses the schema.
 */
export const Media = (mediaType: string, description: string, schema: TSchema = Type.String()) =>
  Type.Unsafe<string | Buffer>({ description, content: { [mediaType]: { schema } } });
