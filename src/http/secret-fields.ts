/**
 * Secrets in answers. A response schema marks each property that holds a secret (a key's secret,
 * a signing secret, a session's CSRF token) with the OpenAPI extension `x-secret: true`; the
 * OpenAPI document carries the mark, and one rule follows from it: an answer kept for an
 * `Idempotency-Key` never holds a marked field (it is kept as null). So a route whose answer
 * holds a secret needs nothing but the mark on its schema.
 */
import type { TSchema } from '@sinclair/typebox';

/** The schema keyword of the mark: an OpenAPI 3.1 extension, passed through to the document as it is. */
export const SECRET_MARK = 'x-secret';

/** `schema`, marked as holding a secret (see the file's comment). */
export function Secret<T extends TSchema>(schema: T): T {
  return { ...schema, [SECRET_MARK]: true } as T;
}

/** Whether a schema (or a document's schema) carries the mark. */
export function isSecret(schema: unknown): boolean {
  return typeof schema === 'object' && schema !== null && (schema as Record<string, unknown>)[SECRET_MARK] === true;
}

/** One step of a path into an answer: a property's name, or `*` for every item of an array. */
export type PathStep = string;

type Node = Record<string, unknown>;

/**
 * The paths, from the answer's root, of every property a response schema marks as secret:
 * through `properties`, `items` (`*`) and the branches of `anyOf`, `oneOf` and `allOf`. A marked
 * property's inside is not walked: the whole value is the secret.
 */
export function secretPaths(schema: unknown, at: PathStep[] = []): PathStep[][] {
  if (typeof schema !== 'object' || schema === null) return [];
  const node = schema as Node;
  if (isSecret(node)) return [at];
  const out: PathStep[][] = [];
  for (const [name, child] of Object.entries((node.properties as Node | undefined) ?? {})) out.push(...secretPaths(child, [...at, name]));
  if (node.items) out.push(...secretPaths(node.items, [...at, '*']));
  for (const key of ['anyOf', 'oneOf', 'allOf'])
    for (const branch of (node[key] as unknown[] | undefined) ?? []) out.push(...secretPaths(branch, at));
  return out;
}

/** The secret paths of every answer a route declares (each status code's schema), each path once. */
export function routeSecretPaths(response: unknown): PathStep[][] {
  const seen = new Map<string, PathStep[]>();
  for (const schema of Object.values((response as Node | undefined) ?? {}))
    for (const path of secretPaths(schema)) seen.set(JSON.stringify(path), path);
  return [...seen.values()];
}

/** Sets every value at `path` under `value` to null (where it exists). */
function clear(value: unknown, path: PathStep[]): void {
  if (path.length === 0 || typeof value !== 'object' || value === null) return;
  const [step, ...rest] = path;
  if (step === '*') {
    if (Array.isArray(value)) for (const item of value) clear(item, rest);
    return;
  }
  const node = value as Node;
  if (!(step in node)) return;
  if (rest.length === 0) node[step] = null;
  else clear(node[step], rest);
}

/**
 * A JSON answer with every value at `paths` set to null; the answer as it is when there is no
 * path, and null when it is not JSON (its secrets cannot be taken out, so it must not be kept).
 */
export function withoutSecrets(body: string, paths: readonly PathStep[][]): string | null {
  if (paths.length === 0) return body;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return null;
  }
  for (const path of paths) clear(parsed, path);
  return JSON.stringify(parsed);
}
