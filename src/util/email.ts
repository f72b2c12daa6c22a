/**
 * The `email` format of AJV's full mode (ajv-formats), which the request schemas' `Email` uses:
 * an address checked here (in a comma-separated list, a CSV row, an unsubscribe) passes or fails
 * exactly as a single `email` field of a form would.
 */
const EMAIL =
  /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i;

/** Whether `value` is a valid email address of at most 254 characters. */
export function isEmail(value: string): boolean {
  return value.length <= 254 && EMAIL.test(value);
}

/** What RFC 6068 lets stand unencoded in a mailto address: unreserved characters and `some-delims` but `@`. */
const MAILTO_PLAIN = /[A-Za-z0-9\-._~!$'()*+,;:]/;

/**
 * `address` as the `to` of a `mailto:` URI (RFC 6068 §2): each character of its local part and
 * domain outside the plain set percent-encoded as UTF-8 (`?`, `#`, `%`, `&`, `/`, `=`, …, and an
 * `@` inside a quoted local part), the last `@` kept as the separator. A URI parser decoding the
 * result gets `address` back exactly.
 */
export function mailtoAddress(address: string): string {
  const at = address.lastIndexOf('@');
  const encode = (part: string) => Array.from(part, (c) => (MAILTO_PLAIN.test(c) ? c : encodeURIComponent(c))).join('');
  return at < 0 ? encode(address) : `${encode(address.slice(0, at))}@${encode(address.slice(at + 1))}`;
}

/**
 * A Message-ID as a report, a provider or a transport gives it (`<id@host>`, `id@host`, with
 * blanks around it, a lone bracket, or a second id after it) reduced to the bare `id@host`, the
 * form our own Message-IDs are stored in; null when it names none. Linear time on any input: no
 * class of either pattern can cross a `<` or `>`.
 */
export function bareMessageId(value: unknown): string | null {
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : typeof value === 'string' ? value : '';
  const m = /<([^<>\s]+)>/.exec(text) ?? /^\s*<*([^<>\s]+)/.exec(text);
  return m ? m[1] : null;
}
