/**
 * Small readers shared by the relay webhooks: providers' payloads are JSON of their own shape,
 * read defensively (any member may be missing or of another type) and never trusted for more
 * than the fields they document.
 */
import { AppError } from '../http/errors.js';

/** A payload that is valid JSON but not the provider's shape: 400, nothing taken in. */
export class MalformedPayload extends AppError {
  constructor(text: string) {
    super(400, text);
  }
}

/** The value as a plain object, or null. */
export function objectOf(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** The value as trimmed, non-empty text (numbers as their decimal text), or null. */
export function textOf(value: unknown): string | null {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') return null;
  const t = value.trim();
  return t === '' ? null : t;
}

/** The texts given, joined by a space, skipping the empty ones; null when none. */
export function joined(...parts: unknown[]): string | null {
  const texts = parts.map(textOf).filter((t): t is string => t !== null);
  return texts.length ? [...new Set(texts)].join(' ') : null;
}

/** An email address as reported (`Name <a@b>` or `a@b`), trimmed; null when it is not one. */
export function addressOf(value: unknown): string | null {
  const t = textOf(value);
  if (!t) return null;
  // The domain has no `@`: the split is at the last one, not tried at each `@` of `a@a@a@…`.
  const m = /<([^<>\s]+@[^<>\s@]+)>/.exec(t) ?? /^([^<>\s]+@[^<>\s@]+)$/.exec(t);
  return m ? m[1] : null;
}

/**
 * Parses a body as JSON; a body that is none is a 400. The integer values of the members named in
 * `exactIntegers` are read as their decimal text: JSON.parse would round a 64-bit id (Postmark's
 * `ID`) to the nearest double, and two events would share a key. In valid JSON, `"NAME":` with
 * both quotes unescaped can only be a member name, never text inside a string.
 */
export function parseJsonBody(raw: Buffer | undefined, exactIntegers: string[] = []): unknown {
  if (!raw || raw.length === 0) throw new MalformedPayload('The request body is empty: a JSON payload is expected.');
  let text = raw.toString('utf8');
  for (const name of exactIntegers) text = text.replace(new RegExp(`("${name}"\\s*:\\s*)(-?\\d+)(?=\\s*[,}\\]])`, 'g'), '$1"$2"');
  try {
    return JSON.parse(text);
  } catch {
    throw new MalformedPayload('The request body is not valid JSON.');
  }
}

/** 401 for a request whose signature or password does not verify. */
export class BadSignature extends AppError {
  constructor(text: string, headers: Record<string, string> = {}) {
    super(401, text, headers);
  }
}
