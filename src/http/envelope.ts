/** The success envelope: `{status:'success', message, ...extra}`. */
export function ok<T>(message: T, extra: Record<string, unknown> = {}): { status: 'success'; message: T } {
  return { status: 'success', message, ...extra };
}

/** The three deletes whose success text the spec puts in `errors` (contract §1: both keys). */
export function okInErrors(text: string): { status: 'success'; errors: string; message: string } {
  return { status: 'success', errors: text, message: text };
}

/** A failure body: `{status:'failed', errors}`. Only the error handler should need this. */
export function failed(errors: unknown): { status: 'failed'; errors: unknown } {
  return { status: 'failed', errors };
}
