/**
 * What every call of the console carries of the session, as openapi-fetch middleware: the session
 * cookie goes by itself (same origin); the CSRF token goes as `X-CSRF-Token` on every request, GET
 * included (it covers the GET routes that change state without a list of them); a request refused
 * for a stale token (another tab signed in anew, so the cookie names a newer session) is sent once
 * more with the new session's token; and a 401 tells the session that it ended, with the service's
 * words, which the sign-in page shows. auth.svelte.ts gives the session with `connect`.
 */
import type { Middleware } from 'openapi-fetch';

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

export const UNREACHABLE = 'The service cannot be reached. Check your connection and try again.';

/** The headers of every call: JSON answers and the session's CSRF token (harmless on reads, needed on changes). */
function sessionHeaders(): Record<string, string> {
  const token = link.csrf();
  return token ? { Accept: 'application/json', 'X-CSRF-Token': token } : { Accept: 'application/json' };
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

/** An answer that is not a success (its JSON body, or its text when it had none) as an ApiError. */
export function envelopeError(status: number, body: unknown): ApiError {
  if (typeof body !== 'object' || body === null) return new ApiError(status, `The service answered ${status} without a readable body.`);
  const { errors } = body as { errors?: unknown };
  const fields = errors && typeof errors === 'object' ? (errors as Record<string, string[]>) : {};
  return new ApiError(status, errorText(errors), fields);
}

/** The envelope of an answer, read from a copy (the body stays for the client), or null when it is not JSON. */
async function envelopeOf(response: Response): Promise<{ status?: string; errors?: unknown } | null> {
  try {
    return (await response.clone().json()) as { status?: string; errors?: unknown };
  } catch {
    return null;
  }
}

/** A copy of each request on its way, by the client's request id: sent once more when its token was stale. */
const copies = new Map<string, Request>();

/** The session's part of every call made through the typed client. */
export const sessionMiddleware: Middleware = {
  onRequest({ request, id }) {
    for (const [name, value] of Object.entries(sessionHeaders())) request.headers.set(name, value);
    copies.set(id, request.clone());
    return request;
  },
  async onResponse({ response, id, options }) {
    const copy = copies.get(id);
    copies.delete(id);
    let answer = response;
    if (answer.status === 403 && copy && errorText((await envelopeOf(answer))?.errors) === INVALID_CSRF && (await link.renew())) {
      copy.headers.set('X-CSRF-Token', link.csrf());
      // A plain call: the browser's fetch refuses to run as a method of another object.
      const fetchAgain = options.fetch;
      answer = await fetchAgain(copy);
    }
    if (answer.status === 401) link.ended(envelopeError(401, await envelopeOf(answer)).message);
    // A success that is not JSON (a proxy's page) cannot be read as the envelope: say so with its status.
    if (answer.ok && options.parseAs === 'json' && !(answer.headers.get('Content-Type') ?? '').includes('json'))
      throw new ApiError(answer.status, `The service answered ${answer.status} without a readable body.`);
    return answer;
  },
  onError({ id }) {
    copies.delete(id);
    return new ApiError(0, UNREACHABLE);
  },
};

/**
 * Runs one request made outside the typed client (an upload, which needs XMLHttpRequest for its
 * progress) with the session's headers; when it is refused for a stale CSRF token, takes the new
 * session's token and runs it once more. A 401 tells the session that it ended.
 */
export async function withToken<T>(send: (headers: Record<string, string>) => Promise<T>): Promise<T> {
  try {
    try {
      return await send(sessionHeaders());
    } catch (e) {
      if (e instanceof ApiError && e.status === 403 && e.message === INVALID_CSRF && (await link.renew()))
        return await send(sessionHeaders());
      throw e;
    }
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) link.ended(e.message);
    throw e;
  }
}
