/**
 * The one way the console calls the API: the key headers, form bodies, and the envelope
 * (`{status:'success', message}` or `{status:'failed', errors}`). A failure becomes an ApiError
 * whose `message` is readable text, shown by the pages in a `role="alert"` element.
 */
import type { Keys } from './session';

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

/** Calls `method path` with `keys`; answers the envelope's `message` (and the whole body for extras such as `id`). */
export async function call<T>(keys: Keys, method: string, path: string, opts: { query?: Query; form?: Form } = {}): Promise<T> {
  const headers: Record<string, string> = { PublicKey: keys.publicKey, SecretKey: keys.secretKey, Accept: 'application/json' };
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
    res = await fetch(url(path, opts.query), { method, headers, body });
  } catch {
    throw new ApiError(0, 'The service cannot be reached. Check your connection and try again.');
  }
  let json: { status?: string; message?: unknown; errors?: unknown };
  try {
    json = await res.json();
  } catch {
    throw new ApiError(res.status, `The service answered ${res.status} without a readable body.`);
  }
  if (!res.ok || json.status !== 'success') {
    const fields = json.errors && typeof json.errors === 'object' ? (json.errors as Record<string, string[]>) : {};
    const text = res.status === 401 ? 'These keys were not accepted. Check the public and the secret key.' : errorText(json.errors);
    throw new ApiError(res.status, text, fields);
  }
  return json as T;
}

/** The API for one signed-in account. */
export function api(keys: Keys) {
  return {
    get: <T>(path: string, query?: Query) => call<{ message: T }>(keys, 'GET', path, { query }).then((r) => r.message),
    post: <T = { message: string; id?: number }>(path: string, form: Form, query?: Query) => call<T>(keys, 'POST', path, { form, query }),
    delete: (path: string, query: Query) => call<{ message: string }>(keys, 'DELETE', path, { query }),
  };
}

export type Api = ReturnType<typeof api>;

/** A failure as the text to show. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Posts a multipart form (e.g. a CSV file) with the key headers, reporting the upload's progress
 * (0–1) as the browser sends it: `fetch` cannot, XMLHttpRequest can. Answers like `call`: the
 * whole success body, or an ApiError with the envelope's errors.
 */
export function upload<T = { message: string }>(
  keys: Keys,
  path: string,
  formData: FormData,
  onProgress: (fraction: number) => void = () => {},
): Promise<T> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', path);
    xhr.setRequestHeader('PublicKey', keys.publicKey);
    xhr.setRequestHeader('SecretKey', keys.secretKey);
    xhr.setRequestHeader('Accept', 'application/json');
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
      if (xhr.status < 200 || xhr.status >= 300 || json.status !== 'success') {
        const fields = json.errors && typeof json.errors === 'object' ? (json.errors as Record<string, string[]>) : {};
        const text = xhr.status === 401 ? 'These keys were not accepted. Check the public and the secret key.' : errorText(json.errors);
        reject(new ApiError(xhr.status, text, fields));
        return;
      }
      resolve(json as T);
    };
    xhr.send(formData);
  });
}
