/**
 * Calls of the SendGrid-compatible routes (`/v3/…`), which answer SendGrid's shapes instead of the
 * envelope: JSON in and out, 201 and 204 answers, failures as `{"errors":[{message, field}]}`. The
 * session's headers go with each call as with every other (see `withToken`); a refusal becomes an
 * ApiError with the fields SendGrid's list names, which the pages show on their fields.
 */
import type { paths } from './api.gen';
import { ApiError, UNREACHABLE, withToken } from './session-link';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;

/** A template with its versions, as `GET /v3/templates/{id}` answers it. */
export type TxTemplate = Json<paths['/v3/templates/{template_id}']['get']['responses'][200]>;
/** One version, with its contents. */
export type TxVersion = Json<paths['/v3/templates/{template_id}/versions/{version_id}']['get']['responses'][200]>;
/** The list answer. */
export type TxTemplateList = Json<paths['/v3/templates']['get']['responses'][200]>;

/** Calls `method path` (with a JSON body); answers the parsed body, undefined for a 204. */
export function v3<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: object): Promise<T> {
  return withToken(async (headers) => {
    let response: Response;
    try {
      response = await fetch(path, {
        method,
        credentials: 'same-origin',
        headers: body ? { ...headers, 'Content-Type': 'application/json' } : headers,
        body: body ? JSON.stringify(body) : undefined,
      });
    } catch {
      throw new ApiError(0, UNREACHABLE);
    }
    if (response.status === 204) return undefined as T;
    let json: unknown;
    try {
      json = await response.json();
    } catch {
      throw new ApiError(response.status, `The service answered ${response.status} without a readable body.`);
    }
    if (!response.ok) {
      const errors = (json as { errors?: Array<{ field: string | null; message: string }> }).errors ?? [];
      const fields: Record<string, string[]> = {};
      for (const e of errors) if (e.field) (fields[e.field] ??= []).push(e.message);
      throw new ApiError(response.status, errors.map((e) => e.message).join(' ') || `The service answered ${response.status}.`, fields);
    }
    return json as T;
  });
}
