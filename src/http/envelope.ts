/** The success envelope: `{status:'success', message, ...extra}`. */
export function ok<T, E extends Record<string, unknown> = Record<never, never>>(
  message: T,
  extra?: E,
): { status: 'success'; message: T } & E {
  return { status: 'success', message, ...(extra as E) };
}

/**
 * The three deletes (segment, contact type, sender) whose success text also stands in `errors`:
 * clients written for the original service read it there, newer ones read `message`.
 */
export function okInErrors(text: string): { status: 'success'; errors: string; message: string } {
  return { status: 'success', errors: text, message: text };
}

/** A failure body: `{status:'failed', errors}`. Only the error handler should need this. */
export function failed(errors: unknown): { status: 'failed'; errors: unknown } {
  return { status: 'failed', errors };
}
