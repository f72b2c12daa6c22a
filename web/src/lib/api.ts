/**
 * The one way the console calls the API: the session (its cookie goes by itself; the CSRF token
 * goes as `X-CSRF-Token` with every call), form bodies, and the envelope (`{status:'success',
 * message}` or `{status:'failed', errors}`). A failure becomes an ApiError whose `message` is
 * readable text, shown by the pages in a `role="alert"` element. The console holds no key.
 */

export type Query = Record<string, string | number | undefined>;
/** A urlencoded body: an array goes as `name[0]`, `name[1]`, … (as the API's bulk deletes and recipient lists take it). */
export type Form = Record<string, string | number | undefined | null | Array<string | number>>;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Field errors (field → messages) when the API named fields. */
    readonly fields: Record<string, string[]> = {},
  ) {
    super(message);
  }
}

/** The envelope's `errors` as one line of text. */
function errorText(errors: unknown): string {
  if (typeof errors === 'string') return errors;
  if (errors && typeof errors === 'object')
    return Object.values(errors as Record<string, string[]>)
      .flat()
      .join(' ');
  return 'The server gave no reason.';
}

function url(path: string, query?: Query): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return path + (qs ? `?${qs}` : '');
}

/** What the API client needs of the session (auth.svelte.ts gives it with `connect`). */
export interface SessionLink {
  /** The session's CSRF token ('' when signed out). */
  csrf(): string;
  /** A 401 of a call: the session ended (signed out elsewhere, expired, the person removed). */
  ended(text: string): void;
  /** A 403 `Invalid CSRF token`: the cookie belongs to a newer session (signed in again in another tab); true when it took its token. */
  renew(): Promise<boolean>;
}

let link: SessionLink = { csrf: () => '', ended: () => {}, renew: async () => false };

/** Ties the client to the session (once, at start). */
export function connect(l: SessionLink): void {
  link = l;
}

/** The text of the 403 for a missing or stale CSRF token. */
const INVALID_CSRF = 'Invalid CSRF token';

/** The headers of every call: JSON answers and the session's CSRF token (harmless on reads, needed on changes). */
export function headers(): Record<string, string> {
  const token = link.csrf();
  return token ? { Accept: 'application/json', 'X-CSRF-Token': token } : { Accept: 'application/json' };
}

/** An answer that is not a success as an ApiError; a 401 also tells the session that it ended. */
function failure(status: number, json: { errors?: unknown }): ApiError {
  const fields = json.errors && typeof json.errors === 'object' ? (json.errors as Record<string, string[]>) : {};
  const error = new ApiError(status, errorText(json.errors), fields);
  if (status === 401) link.ended(error.message);
  return error;
}

/**
 * Runs one request; when it is refused for a stale CSRF token (another tab signed in anew, so the
 * cookie names a newer session), takes the new session's token and runs it once more.
 */
async function withToken<T>(send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (e) {
    if (e instanceof ApiError && e.status === 403 && e.message === INVALID_CSRF && (await link.renew())) return send();
    throw e;
  }
}

/** Calls `method path`; answers the envelope's `message` (and the whole body for extras such as `id`). */
export function call<T>(method: string, path: string, opts: { query?: Query; form?: Form } = {}): Promise<T> {
  return withToken(() => send<T>(method, path, opts));
}

async function send<T>(method: string, path: string, opts: { query?: Query; form?: Form }): Promise<T> {
  let body: URLSearchParams | undefined;
  if (opts.form) {
    body = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.form)) {
      if (Array.isArray(v)) v.forEach((item, i) => body!.append(`${k}[${i}]`, String(item)));
      else if (v !== undefined && v !== null) body.set(k, String(v));
    }
  }
  let res: Response;
  try {
    res = await fetch(url(path, opts.query), { method, headers: headers(), body, credentials: 'same-origin' });
  } catch {
    throw new ApiError(0, 'The service cannot be reached. Check your connection and try again.');
  }
  let json: { status?: string; message?: unknown; errors?: unknown };
  try {
    json = await res.json();
  } catch {
    throw new ApiError(res.status, `The service answered ${res.status} without a readable body.`);
  }
  if (!res.ok || json.status !== 'success') throw failure(res.status, json);
  return json as T;
}

/** The API of the signed-in person. */
export function api() {
  return {
    get: <T>(path: string, query?: Query) => call<{ message: T }>('GET', path, { query }).then((r) => r.message),
    post: <T = { message: string; id?: number }>(path: string, form: Form = {}, query?: Query) => call<T>('POST', path, { form, query }),
    delete: (path: string, query: Query) => call<{ message: string }>('DELETE', path, { query }),
  };
}

export type Api = ReturnType<typeof api>;

/** A failure as the text to show. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Posts a multipart form (e.g. a CSV file) with the session, reporting the upload's progress
 * (0–1) as the browser sends it: `fetch` cannot, XMLHttpRequest can. Answers like `call`: the
 * whole success body, or an ApiError with the envelope's errors.
 */
export function upload<T = { message: string }>(
  path: string,
  formData: FormData,
  onProgress: (fraction: number) => void = () => {},
): Promise<T> {
  return withToken(
    () =>
      new Promise<T>((resolve, reject) => {
        const xhr = new XMLHttpRequest();
        xhr.open('POST', path);
        for (const [name, value] of Object.entries(headers())) xhr.setRequestHeader(name, value);
        xhr.upload.onprogress = (e) => {
          if (e.lengthComputable && e.total > 0) onProgress(e.loaded / e.total);
        };
        xhr.upload.onload = () => onProgress(1);
        xhr.onerror = () => reject(new ApiError(0, 'The service cannot be reached. Check your connection and try again.'));
        xhr.onload = () => {
          let json: { status?: string; errors?: unknown };
          try {
            json = JSON.parse(xhr.responseText);
          } catch {
            reject(new ApiError(xhr.status, `The service answered ${xhr.status} without a readable body.`));
            return;
          }
          if (xhr.status < 200 || xhr.status >= 300 || json.status !== 'success') reject(failure(xhr.status, json));
          else resolve(json as T);
        };
        xhr.send(formData);
      }),
  );
}

/** Fetches `path` with the session and answers its body as a Blob (a download a plain link cannot make); a failure as an ApiError. */
export function download(path: string): Promise<Blob> {
  return withToken(async () => {
    let res: Response;
    try {
      res = await fetch(path, { headers: headers(), credentials: 'same-origin' });
    } catch {
      throw new ApiError(0, 'The service cannot be reached. Check your connection and try again.');
    }
    if (!res.ok) throw failure(res.status, ((await res.json().catch(() => null)) as { errors?: unknown } | null) ?? {});
    return res.blob();
  });
}
