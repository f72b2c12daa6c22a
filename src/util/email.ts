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
