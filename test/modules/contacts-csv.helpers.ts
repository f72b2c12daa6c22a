import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Client } from '../helpers.js';

/** A multipart body built by hand: fields and an optional file part, the file first or last. */
export function multipart(
  fields: Record<string, string | number>,
  file?: { content: string | Buffer; name?: string; field?: string },
  fileFirst = false,
) {
  const boundary = '----csv' + randomBytes(8).toString('hex');
  const parts: Buffer[] = [];
  const fieldParts = Object.entries(fields).map(([k, v]) =>
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`),
  );
  const fileParts = file
    ? [
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${file.field ?? 'file'}"; filename="${file.name ?? 'contacts.csv'}"\r\nContent-Type: text/csv\r\n\r\n`,
        ),
        Buffer.isBuffer(file.content) ? file.content : Buffer.from(file.content),
        Buffer.from('\r\n'),
      ]
    : [];
  parts.push(...(fileFirst ? [...fileParts, ...fieldParts] : [...fieldParts, ...fileParts]), Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

export function upload(
  c: Client,
  contactTypeId: number | string | undefined,
  csv?: string | Buffer,
  opts: { name?: string; fileFirst?: boolean } = {},
) {
  const fields: Record<string, string | number> = contactTypeId === undefined ? {} : { contact_type_id: contactTypeId };
  const body = multipart(fields, csv === undefined ? undefined : { content: csv, name: opts.name }, opts.fileFirst);
  return c.request('POST', '/contacts/upload-csv', body);
}

/** The account's live contacts of one type, by lower-cased email. */
export async function contactsOf(c: Client, typeId: number): Promise<Map<string, any>> {
  const r = await c.get('/contacts/list');
  assert.equal(r.status, 200);
  const list = r.body.message.contacts.filter((x: { contact_type_id: number }) => x.contact_type_id === typeId);
  return new Map(list.map((x: { email: string }) => [x.email.toLowerCase(), x]));
}

/** One contact as details shows it. */
export async function details(c: Client, id: number) {
  return (await c.get('/contacts/details', { contact_id: id })).body.message.contact;
}

/** The success envelope of an import. */
export const imported = (created: number, updated: number, skipped: number, errors: unknown[] = []) => ({
  status: 'success',
  message: 'Imported Successfully',
  summary: { created, updated, skipped, errors },
});
