import type { FastifyRequest, preParsingHookHandler } from 'fastify';
import { AppError, ValidationError } from '../../http/errors.js';

/** What the multipart body brought: the `file` part's bytes and the name it was sent with. */
export interface MediaUpload {
  name: string;
  bytes: Buffer;
}

/** The text of a file over the size limit (Laravel's `max` rule on a file, in kilobytes). */
export const tooLargeMessage = (maxBytes: number) => `The file must not be greater than ${Math.floor(maxBytes / 1024)} kilobytes.`;

const REQUIRED = 'The file field is required.';

/** Room for the multipart framing and a file name around the file. */
const FRAMING = 64 * 1024;

/**
 * A route preParsing hook: a body announced at more than twice the file limit is refused with 413
 * before a byte of it is read (a file just over the limit is read up to the limit, and answered 422).
 */
export function refuseHugeBodies(maxBytes: number): preParsingHookHandler {
  return (request, _reply, payload, done) => {
    if (Number(request.headers['content-length']) > 2 * maxBytes + FRAMING) {
      return done(new AppError(413, 'The request body is too large.'));
    }
    done(null, payload);
  };
}

/**
 * Reads the `file` part of a multipart upload into memory, at most `maxBytes` of it: past the
 * limit the stream is dropped at once (422 with the size text), so a large file is never read
 * whole. Other parts are skipped. No file, or an empty one (as Laravel reads it): `file` is required.
 */
export async function receiveImage(req: FastifyRequest, maxBytes: number): Promise<MediaUpload> {
  if (!req.isMultipart()) throw new ValidationError({ file: [REQUIRED] });
  let upload: MediaUpload | null = null;
  try {
    for await (const part of req.parts({ limits: { fileSize: maxBytes } })) {
      if (part.type === 'field' || part.fieldname !== 'file' || upload) {
        if (part.type === 'file') part.file.resume();
        continue;
      }
      // Past the limit busboy would read the rest of the part before ending the file: stop at once.
      part.file.once('limit', () => part.file.destroy(new ValidationError({ file: [tooLargeMessage(maxBytes)] })));
      const chunks: Buffer[] = [];
      let total = 0;
      for await (const chunk of part.file) {
        total += (chunk as Buffer).length;
        chunks.push(chunk as Buffer);
      }
      if (part.file.truncated || total > maxBytes) throw new ValidationError({ file: [tooLargeMessage(maxBytes)] });
      upload = { name: part.filename ?? '', bytes: Buffer.concat(chunks, total) };
    }
  } catch (err) {
    const { code } = err as { code?: string };
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw new ValidationError({ file: [tooLargeMessage(maxBytes)] });
    if (code === 'FST_FILES_LIMIT') throw new ValidationError({ file: ['Only one file may be uploaded.'] });
    // A broken multipart body is answered 400 by the error handler.
    throw err;
  }
  if (!upload || upload.bytes.length === 0) throw new ValidationError({ file: [REQUIRED] });
  return upload;
}
