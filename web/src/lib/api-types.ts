/**
 * Types read from the generated `paths` of the service's OpenAPI document (`api.gen.d.ts`): which
 * paths take which method, an operation's query and form body, its success answer. The console's
 * names for the records it shows (`Contact`, `SingleSend`, …) are in `records.ts`, each one a
 * piece of an answer here, never a copy.
 */
import type { paths } from './api.gen';

export type Method = 'get' | 'post' | 'delete';

/** The paths that take `method`. */
type PathWith<M extends Method> = { [P in keyof paths]: paths[P] extends { [K in M]: object } ? P : never }[keyof paths];
export type GetPath = PathWith<'get'>;
export type PostPath = PathWith<'post'>;
export type DeletePath = PathWith<'delete'>;

/** The operation `method path` of the document. */
export type Operation<P extends keyof paths, M extends Method> = paths[P] extends { [K in M]: infer O } ? O : never;

/** The JSON body of an operation's 200 answer. */
type Ok<O> = O extends { responses: { 200: { content: { 'application/json': infer B } } } } ? B : never;

/** The success body of `method path` (`{status:'success', message, …}`). */
export type Answer<P extends keyof paths, M extends Method = 'get'> = Ok<Operation<P, M>>;

/** The `message` of a GET's success: what `api.get` answers. */
export type Message<P extends GetPath> = Answer<P, 'get'> extends { message: infer T } ? T : never;

/** A value as a form or a query string carries it. */
type Scalar = string | number;

/**
 * What a form may give for a field of type `V`: text or a number for a scalar (the service checks
 * and coerces it; a field left empty is its refusal to word), an array of such for an array (or
 * an object by index: `variants[1]`, as a form numbers them), an object of such for an object.
 * The names are the document's; only their values are loosened.
 */
type FormValue<V> = [NonNullable<V>] extends [ReadonlyArray<infer I>]
  ? { readonly [index: number]: FormValue<I> }
  : [NonNullable<V>] extends [object]
    ? { [K in keyof NonNullable<V>]?: FormValue<NonNullable<V>[K]> }
    : Scalar | null | undefined;

/** A form body for a body of type `B`: every field optional (the service names the missing ones), none unknown. */
export type FormOf<B> = [B] extends [never] ? Record<string, never> : { [K in keyof B]?: FormValue<B[K]> };

/** The urlencoded form body of an operation (none: an empty form). */
export type BodyOf<O> = O extends { requestBody?: { content: { 'application/x-www-form-urlencoded': infer B } } } ? B : never;

/** The body of `POST path` as the document types it (a form loosens its values: `Form`). */
export type Body<P extends PostPath> = BodyOf<Operation<P, 'post'>>;

/** The form body of `POST path`. */
export type Form<P extends PostPath> = FormOf<BodyOf<Operation<P, 'post'>>>;

/** A query with the document's names, required ones required; values as a query string carries them. */
type QueryValues<Q> = { [K in keyof Q]: Scalar | (undefined extends Q[K] ? undefined : never) };

/** The query argument of an operation: required when the operation has a required parameter, absent when it has none. */
export type QueryArgs<O> = O extends { parameters: { query: infer Q } }
  ? [query: QueryValues<Q>]
  : O extends { parameters: { query?: infer Q } }
    ? [Q] extends [never]
      ? []
      : [query?: QueryValues<NonNullable<Q>>]
    : [];

/** The query of `GET path`. */
export type Query<P extends GetPath> = QueryArgs<Operation<P, 'get'>> extends [query?: infer Q] ? NonNullable<Q> : never;
