/**
 * The one way the console calls the API: a typed client (openapi-fetch) over the types generated
 * from the service's OpenAPI document (`api.gen.d.ts`, written by scripts/openapi-types.ts), so a
 * path, a query or a form field the service does not have, or an answer read as a shape it does not
 * give, fails the type check. The session goes as middleware (see `session-link.ts`): the cookie
 * (the browser sends it), `X-CSRF-Token` on every call, one renewal of a stale token, and a 401
 * back to the sign-in page with the service's words. The envelope (`{status:'success', message}` or
 * `{status:'failed', errors}`) is read here: a failure becomes an ApiError whose `message` is
 * readable text, shown by the pages in a `role="alert"` element. The console holds no key.
 */
import createClient from 'openapi-fetch';
import type { paths } from './api.gen';
import { ApiError, envelopeError, sessionMiddleware, UNREACHABLE, withToken } from './session-link';
import type { Answer, BodyOf, FormOf, GetPath, Message, Method, Operation, PostPath, QueryArgs, DeletePath } from './api-types';

export { ApiError, connect, type SessionLink } from './session-link';
export type * from './api-types';

/** A form body as the API reads it (qs): an array item goes as `name[0]`, an object's member as `name[key]`, nested alike. */
function formBody(form: unknown): URLSearchParams {
  const body = new URLSearchParams();
  const put = (name: string, value: unknown): void => {
    if (value === undefined || value === null) return;
    if (Array.isArray(value)) value.forEach((item, i) => put(`${name}[${i}]`, item));
    else if (typeof value === 'object') for (const [k, v] of Object.entries(value)) put(`${name}[${k}]`, v);
    else body.append(name, String(value));
  };
  for (const [k, v] of Object.entries(form as object)) put(k, v);
  return body;
}

/** A query string: empty and missing values are left out (a filter not set is not sent). */
function queryString(query: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  return params.toString();
}

const FORM_TYPE = 'application/x-www-form-urlencoded';

/** The typed client of the signed-in person (same origin: the session cookie goes with every call). */
export const client = createClient<paths>({ credentials: 'same-origin', querySerializer: queryString, bodySerializer: formBody });
client.use(sessionMiddleware);

type Result = { data?: unknown; error?: unknown; response: Response };

/** The success body of a call, or the envelope's failure as an ApiError. */
async function answer<T>(pending: Promise<Result>): Promise<T> {
  const { data, error, response } = await pending;
  const body = (data ?? error) as { status?: string; errors?: unknown } | string | undefined;
  if (!response.ok || typeof body !== 'object' || body.status !== 'success') throw envelopeError(response.status, body);
  return body as T;
}

/** Calls `method path` with a query and a form body (typed by the caller's signature). */
function send<T>(method: Method, path: string, query: object | undefined, form?: object): Promise<T> {
  const init = {
    params: { query },
    ...(form ? { body: form, headers: { 'Content-Type': FORM_TYPE } } : {}),
  };
  // The signatures of `api` check the path, query and body against the document; openapi-fetch is
  // given them as they are.
  const request = client.request as unknown as (method: Method, path: string, init: object) => Promise<Result>;
  return answer<T>(request(method, path, init));
}

/**
 * The API of the signed-in person. `get` answers the envelope's `message`; `post` and `delete` the
 * whole success body (its `message` and extras such as `id`). Queries and forms take the names of
 * the document; their values are what a form holds (text or numbers), for the service to check:
 * its refusals are shown on their fields.
 */
export const api = {
  get: <P extends GetPath>(path: P, ...query: QueryArgs<Operation<P, 'get'>>): Promise<Message<P>> =>
    send<{ message: Message<P> }>('get', path, query[0]).then((r) => r.message),
  post: <P extends PostPath>(path: P, form: FormOf<BodyOf<Operation<P, 'post'>>> = {}, ...query: QueryArgs<Operation<P, 'post'>>) =>
    send<Answer<P, 'post'>>('post', path, query[0], form),
  delete: <P extends DeletePath>(path: P, ...query: QueryArgs<Operation<P, 'delete'>>) =>
    send<Answer<P, 'delete'>>('delete', path, query[0]),
};

/** A failure as the text to show. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Posts a multipart form (e.g. a CSV file) with the session, reporting the upload's progress
 * (0–1) as the browser sends it: `fetch` cannot, XMLHttpRequest can. Answers like `api.post`: the
 * whole success body, or an ApiError with the envelope's errors.
 */
export function upload<P extends PostPath>(
  path: P,
  formData: FormData,
  onProgress: (fraction: number) => void = () => {},
): Promise<Answer<P, 'post'>> {
  return withToken(
    (headers) =>
      new Promise((resolve, reject) => {
        const xhr = new XMLHttpRequest();
        xhr.open('POST', path);
        for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value);
        xhr.upload.onprogress = (e) => {
          if (e.lengthComputable && e.total > 0) onProgress(e.loaded / e.total);
        };
        xhr.upload.onload = () => onProgress(1);
        xhr.onerror = () => reject(new ApiError(0, UNREACHABLE));
        xhr.onload = () => {
          let json: { status?: string; errors?: unknown };
          try {
            json = JSON.parse(xhr.responseText);
          } catch {
            reject(envelopeError(xhr.status, xhr.responseText));
            return;
          }
          if (xhr.status < 200 || xhr.status >= 300 || json.status !== 'success') reject(envelopeError(xhr.status, json));
          else resolve(json as Answer<P, 'post'>);
        };
        xhr.send(formData);
      }),
  );
}

/** Fetches `path` with the session and answers its body as a Blob (a download a plain link cannot make); a failure as an ApiError. */
export async function download(path: GetPath): Promise<Blob> {
  const request = client.GET as unknown as (path: string, init: object) => Promise<Result>;
  const { data, error, response } = await request(path, { parseAs: 'blob' });
  if (!response.ok) throw envelopeError(response.status, error);
  return data as Blob;
}

/**
 * A secret the service shows once (a key's, a webhook's signing secret). The document has it null
 * in an answer replayed for an `Idempotency-Key`, which the console never sends: should one come,
 * it is a failure to show, not an empty secret.
 */
export function shownSecret(value: string | null): string {
  if (value === null) throw new ApiError(0, 'The service did not show the secret (an answer given again); make a new one.');
  return value;
}
