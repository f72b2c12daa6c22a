/** Field name → messages, as a 422's `errors` carries them. */
export type FieldErrors = Record<string, string[]>;

/** A failure the error handler renders as `{status:'failed', errors}` with its HTTP status. */
export class AppError extends Error {
  /** The one field a text failure concerns, named in SendGrid's error list under `/v3/` (`Idempotency-Key`). */
  field?: string;
  constructor(
    readonly statusCode: number,
    readonly errors: string | FieldErrors,
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof errors === 'string' ? errors : JSON.stringify(errors));
  }
}

/** 404 with the endpoint's not-found text (`Record Not Found` or `Record not found`). */
export class NotFound extends AppError {
  constructor(text: NotFoundText = RNF) {
    super(404, text);
  }
}

/** 422 with field errors. */
export class ValidationError extends AppError {
  constructor(errors: FieldErrors) {
    super(422, errors);
  }
}

/** 409: the record's state forbids the operation. */
export class Conflict extends AppError {
  constructor(text: string) {
    super(409, text);
  }
}

export const RNF = 'Record Not Found';
export const Rnf = 'Record not found';
export type NotFoundText = typeof RNF | typeof Rnf;
