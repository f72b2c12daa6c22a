import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest, FastifySchemaValidationError } from 'fastify';
import { ok } from '../../http/envelope.js';
import { normalizeInput, parseForm } from '../../http/body.js';
import { AppError, ValidationError, type FieldErrors } from '../../http/errors.js';
import { fieldErrorsFromAjv } from '../../http/messages.js';
import { Int, Media, responses } from '../../http/schemas.js';
import { csvSample, importContactsCsv, isCsvName, type CsvUpload } from './contacts.csv.service.js';

function tooLarge(maxBytes: number): AppError {
  return new AppError(413, `The file must not be greater than ${Math.floor(maxBytes / 1024)} kilobytes.`);
}

/** The fields of the upload besides the file: checked like any route's body, with the same messages. */
const UploadFields = Type.Object({ contact_type_id: Int({ description: 'The contact type the rows go into.' }) });

/** The upload's fields (`contact_type_id`) checked against `UploadFields`: the value, or the failures. */
function checkFields(req: FastifyRequest, fields: Record<string, unknown>): { contactTypeId: number | undefined; failures: FieldErrors } {
  const validate = req.compileValidationSchema(UploadFields, 'body');
  const failures = validate(fields) ? {} : fieldErrorsFromAjv((validate.errors ?? []) as FastifySchemaValidationError[]);
  const value = fields.contact_type_id;
  return { contactTypeId: failures.contact_type_id || typeof value !== 'number' ? undefined : value, failures };
}

/**
 * Reads the multipart body (the file part may come before or after `contact_type_id`) and streams
 * the `file` part to a temporary file, never into memory. Over the size limit: 413, nothing kept.
 * The other parts are read like any multipart form (`contact_type_id[x]` is an object) and checked
 * against `UploadFields`. A body that is not multipart carries no file, but its fields are checked too.
 */
async function receiveUpload(req: FastifyRequest, maxBytes: number): Promise<{ upload: CsvUpload; cleanup: () => Promise<void> }> {
  const tmp = join(tmpdir(), `campaign-import-${randomUUID()}.csv`);
  const cleanup = () => rm(tmp, { force: true });
  if (!req.isMultipart()) {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const file = body.file === undefined ? null : { name: '', path: null, isFile: false };
    return { upload: { ...checkFields(req, body), file }, cleanup };
  }
  const flat: Record<string, string | string[]> = Object.create(null);
  let file: CsvUpload['file'] = null;
  try {
    for await (const part of req.parts()) {
      if (part.type === 'field') {
        const value = String(part.value ?? '');
        if (part.fieldname === 'file') {
          if (!file && value.trim() !== '') file = { name: '', path: null, isFile: false };
        } else {
          const prev = flat[part.fieldname];
          flat[part.fieldname] = prev === undefined ? value : ([] as string[]).concat(prev, value);
        }
        continue;
      }
      // An empty file input (no file chosen) has no name; other file fields are not ours.
      if (part.fieldname !== 'file' || !part.filename || file?.path) {
        part.file.resume();
        continue;
      }
      if (!isCsvName(part.filename)) {
        file = { name: part.filename, path: null, isFile: true };
        part.file.resume();
        continue;
      }
      // Past the limit busboy would read the rest of the part before ending the file: stop at once.
      part.file.once('limit', () => part.file.destroy(tooLarge(maxBytes)));
      await pipeline(part.file, createWriteStream(tmp, { flags: 'wx', mode: 0o600 }));
      if (part.file.truncated) throw tooLarge(maxBytes);
      file = { name: part.filename, path: tmp, isFile: true };
    }
  } catch (err) {
    await cleanup();
    const { code } = err as { code?: string };
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge(maxBytes);
    if (code === 'FST_FILES_LIMIT') throw new ValidationError({ file: ['Only one file may be uploaded.'] });
    // A broken multipart body is answered 400 by the error handler.
    throw err;
  }
  const fields = (normalizeInput(parseForm(flat)) ?? {}) as Record<string, unknown>;
  return { upload: { ...checkFields(req, fields), file }, cleanup };
}

/** The upload's form, as documented: the route reads the multipart stream itself. */
const UploadCsvBody = Type.Object({
  ...UploadFields.properties,
  file: Type.String({ format: 'binary', description: 'A `.csv` file: a header row of field names, then one contact per row.' }),
});

const ImportSummary = Type.Object({
  created: Type.Integer(),
  updated: Type.Integer({ description: 'Rows whose email already existed in the contact type.' }),
  skipped: Type.Integer(),
  errors: Type.Array(Type.Object({ row: Type.Integer(), field: Type.String(), message: Type.String() }), {
    description: 'The first 100 skipped rows and why.',
  }),
});

const Imported = Type.Object(
  { status: Type.Literal('success'), message: Type.String(), summary: ImportSummary },
  { description: 'Imported: what happened to the rows.' },
);

const CsvText = Media('text/csv', 'A header row of every importable column and two example rows (UTF-8 with a BOM).');

/** `/contacts/csv-sample/download` and `/contacts/upload-csv` (see docs/csv-import.md). */
export const contactCsvRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.deps.database;

  const sample = { summary: 'Download a sample CSV', response: responses(CsvText) };
  app.get('/contacts/csv-sample/download', { config: { scope: 'contacts.read' }, schema: sample }, async (req, reply) => {
    const body = await csvSample(db, req.userId);
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', 'attachment; filename="contacts-sample.csv"')
      .header('cache-control', 'no-store')
      .send(body);
  });

  const upload = {
    summary: 'Import contacts from a CSV file',
    description:
      'Rows whose email exists in the contact type update that contact; rows without a valid email or country are skipped and reported.',
    response: responses(Imported, 422),
  };
  app.post(
    '/contacts/upload-csv',
    { schema: upload, config: { scope: 'contacts.write', rawMultipart: true, documentedBody: UploadCsvBody } },
    async (req) => {
      const { upload, cleanup } = await receiveUpload(req, app.deps.config.maxCsvBytes);
      try {
        const summary = await importContactsCsv(app.deps, req.userId, upload);
        return ok('Imported Successfully', { summary });
      } finally {
        await cleanup();
      }
    },
  );
};
