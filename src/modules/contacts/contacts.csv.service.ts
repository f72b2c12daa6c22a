import type pg from 'pg';
import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/index.js';
import { ValidationError, type FieldErrors } from '../../http/errors.js';
import { messages, Rules } from '../../http/messages.js';
import { toId } from '../../http/schemas.js';
import { isoMicros } from '../../util/time.js';
import { findContactType } from '../contact-types/contact-types.queries.js';
import { customFieldsByName, selectFields } from '../fields/fields.queries.js';
import { CONTACT_COLUMNS, RESERVED_EXTRAS, fieldLabel } from '../../reference/fields.js';
import { enqueueEvent } from '../notifications/notifications.events.js';
import { audienceChanged } from '../audience/audience.service.js';
import { CsvFormatError, STD_COLUMNS, readContactCsv, sniffCsv, type ImportRow, type RowError } from './contacts.csv.parse.js';
import { contactsByEmailKeys, contactSink, hasContacts, type ExistingContact } from './contacts.csv.queries.js';
import { parseCustomValues, serializeCustomValues } from './contacts.values.js';
import { refreshAfterBulkLoad } from '../../db/dialect.js';

/** Imports that create this many contacts refresh the table's planner statistics afterwards. */
const ANALYZE_AFTER_ROWS = 10_000;

/**
 * What the route received: `contact_type_id` as its schema read it (absent when missing or failed),
 * the schema's failures, and the stored file (path null: not stored).
 */
export interface CsvUpload {
  contactTypeId: number | undefined;
  failures?: FieldErrors;
  file: { name: string; path: string | null; isFile: boolean } | null;
}

/** The `summary` of the response: rows created, updated and skipped, and the first row errors. */
export interface ImportSummary {
  created: number;
  updated: number;
  skipped: number;
  errors: RowError[];
}

/** Rows per batch (a statement on SQLite: 13 parameters a row, limit 32,766). */
const BATCH = 1000;
const MAX_ERRORS = 100;
const EMAIL = STD_COLUMNS.indexOf('email');

/** The request's field rules, all reported together; returns the contact type id. */
async function checkUpload(db: Db, userId: number, upload: CsvUpload): Promise<number> {
  const rules = new Rules(upload.failures);
  let typeId = 0;
  if (!rules.failed('contact_type_id')) {
    // An integer (the schema's check); out of range, not the account's or deleted: invalid.
    typeId = toId(upload.contactTypeId) ?? 0;
    if (!typeId || !(await findContactType(db, userId, typeId))) rules.add('contact_type_id', messages.invalid('contact_type_id'));
  }
  if (!upload.file) rules.add('file', messages.required('file'));
  else if (!upload.file.isFile || !upload.file.path) rules.add('file', messages.fileType('file', 'csv'));
  rules.done();
  return typeId;
}

/** Whether a file name has the csv extension (the only file type the import takes). */
export function isCsvName(name: string): boolean {
  return /\.csv$/i.test(name.trim());
}

function fileError(text: string): ValidationError {
  return new ValidationError({ file: [text] });
}

/** An existing contact as a row to merge the file's values into. */
function fromExisting(c: ExistingContact): ImportRow {
  return { values: STD_COLUMNS.map((col) => (c[col] === '' ? null : c[col])), custom: c.custom_field };
}

/** The file's non-empty cells win; empty cells keep what the contact had (custom values merge). */
function merge(prev: ImportRow, next: ImportRow): ImportRow {
  const values = next.values.map((v, i) => v ?? prev.values[i]);
  if (!prev.custom || !next.custom) return { values, custom: next.custom ?? prev.custom };
  return { values, custom: serializeCustomValues({ ...parseCustomValues(prev.custom), ...parseCustomValues(next.custom) }) };
}

/**
 * The writer of one import, inside its transaction. `write` takes a batch: learns which emails
 * exist (one query, after `flush`ing what the sink holds), merges repeated emails (the later row
 * wins; PostgreSQL refuses to update a row twice in one statement) and hands the merged rows to
 * the sink. Every row counts once: `updated` when its email existed before it (in the contact
 * type, or earlier in the file), else `created`. Statements run one after the other.
 */
async function contactWriter(trx: Db, client: pg.PoolClient | null, userId: number, typeId: number, now: Date) {
  const sink = contactSink(trx, client, userId, typeId, isoMicros(now));
  // When the type had no live contact at the start, only emails this import wrote can exist, so a
  // batch of new emails needs no lookup (a first import of a big list). SQLite has one writer;
  // on PostgreSQL a contact added to the type meanwhile is still never duplicated (ON CONFLICT).
  const written = (await hasContacts(trx, userId, typeId)) ? null : new Set<string>();
  const write = async (rows: ImportRow[], summary: ImportSummary): Promise<void> => {
    if (rows.length === 0) return;
    const keys = new Set<string>();
    for (const r of rows) keys.add(r.values[EMAIL]!.toLowerCase());
    const ask = written ? [...keys].filter((k) => written.has(k)) : [...keys];
    const found = new Map<string, ImportRow>();
    if (ask.length) {
      await sink.flush(); // the lookup must see every row written before
      for (const c of await contactsByEmailKeys(trx, userId, typeId, ask)) found.set(c.email_key, fromExisting(c));
    }
    const merged = new Map<string, ImportRow>();
    for (const row of rows) {
      const key = row.values[EMAIL]!.toLowerCase();
      const prev = merged.get(key) ?? found.get(key);
      if (prev) summary.updated++;
      else summary.created++;
      merged.set(key, prev ? merge(prev, row) : row);
    }
    const tuples: (string | null)[][] = [];
    for (const [key, { values: v, custom }] of merged) {
      tuples.push([v[0] ?? '', v[1] ?? '', v[2], key, v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], custom]);
      written?.add(key);
    }
    await sink.write(tuples);
  };
  return { write, flush: () => sink.flush(), abort: () => sink.abort() };
}

/**
 * Imports a stored CSV file into a contact type: checks the request, then the header,
 * then imports every row in one transaction with segment membership brought up to date, so a
 * failure anywhere (bad CSV, disk, database) leaves nothing behind. Notifies after the commit.
 */
export async function importContactsCsv(deps: AppDeps, userId: number, upload: CsvUpload): Promise<ImportSummary> {
  const { db } = deps.database;
  const typeId = await checkUpload(db, userId, upload);
  const path = upload.file!.path!;
  const { delimiter, empty } = await sniffCsv(path);
  if (empty) throw fileError('The file is empty.');
  const customFields = [...(await customFieldsByName(db, userId))].map(([name, f]) => ({ name, type: f.field_type }));
  const opts = { delimiter, customFields, batchSize: BATCH, maxErrors: MAX_ERRORS };
  const reader = readContactCsv(path, opts);
  const summary: ImportSummary = { created: 0, updated: 0, skipped: 0, errors: [] };
  try {
    const first = await reader.next();
    if (first.done || first.value.kind !== 'header') throw fileError('The file is empty.');
    const { missing, ignored } = first.value.plan;
    if (missing.length) throw fileError(`The file is missing the required column${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}.`);
    for (const name of ignored)
      summary.errors.push({ row: 1, field: name, message: `The column ${name} is not a field; its values were ignored.` });

    await deps.database.transactionWithClient(async (trx, client) => {
      const writer = await contactWriter(trx, client, userId, typeId, deps.clock.now());
      try {
        for await (const msg of reader) {
          if (msg.kind !== 'batch') continue;
          summary.skipped += msg.skipped;
          for (const e of msg.errors) if (summary.errors.length < MAX_ERRORS) summary.errors.push(e);
          await writer.write(msg.rows, summary);
        }
        await writer.flush();
      } catch (err) {
        await writer.abort();
        throw err;
      }
      await audienceChanged(trx, deps, userId, { contactTypeId: typeId });
      // The notification is queued with the import: both are committed, or neither.
      const details = { contact_type_id: typeId, created: summary.created, updated: summary.updated, skipped: summary.skipped };
      await enqueueEvent(trx, deps, userId, 'contacts.imported', details);
    });
  } catch (err) {
    if (err instanceof CsvFormatError) throw fileError(err.text);
    throw err;
  } finally {
    await reader.return(undefined);
  }
  if (summary.created >= ANALYZE_AFTER_ROWS) {
    refreshAfterBulkLoad(db, 'contacts').catch((err) => deps.log.warn({ err }, 'vacuum analyze after import failed'));
  }
  return summary;
}

/** A CSV cell: quoted when it holds a delimiter, quote, line break or edge spaces (RFC 4180). */
function cell(value: string): string {
  return /[",;\t\r\n]|^\s|\s$/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

const SAMPLE_ROWS: Array<Record<string, string>> = [
  {
    first_name: 'Ada',
    last_name: 'Lovelace',
    email: 'ada.lovelace@example.com',
    alt_email: 'ada@example.org',
    country: 'India',
    state: 'Maharashtra',
    city: 'Mumbai',
    address_line1: '12 Marine Drive, Flat 4',
    address_line2: 'Colaba',
    state_province_region: 'Maharashtra',
    postal_code: '400005',
    father_name: 'George Byron',
    designation: 'Engineer',
    company_name: 'Analytical Engines Ltd',
    age: '36',
    birth_date: '1988-12-10T09:00',
    join_date: '2021-03-15T09:30',
  },
  {
    first_name: 'Grace',
    last_name: 'Hopper',
    email: 'grace.hopper@example.com',
    alt_email: '',
    country: 'US',
    state: 'New York',
    city: 'New York',
    address_line1: '221 Broadway',
    address_line2: 'Suite 5',
    state_province_region: 'NY',
    postal_code: '10007',
    father_name: 'Walter Murray',
    designation: 'Team Lead',
    company_name: 'Compiler Works Inc',
    age: '41',
    birth_date: '1983-12-09T08:00',
    join_date: '2022-06-01T10:00',
  },
];

/** An example value for a custom field of a type, per sample row. */
function sampleValue(type: string, name: string, row: number): string {
  if (type === 'number') return row === 0 ? '42' : '7';
  if (type === 'datetime-local') return row === 0 ? '2024-03-01T10:00' : '2024-04-15T14:30';
  return `${fieldLabel(name)} ${row + 1}`;
}

/**
 * The CSV sample: a header of every importable column (the contact's columns, the six reserved
 * extras, the account's custom fields) and two example rows; CRLF lines, with a UTF-8 BOM so
 * spreadsheet programs read it as UTF-8 (the import accepts it back as it is).
 */
export async function csvSample(db: Db, userId: number): Promise<string> {
  const custom = await selectFields(db, userId).orderBy('id').execute();
  const header = [...CONTACT_COLUMNS, ...RESERVED_EXTRAS.map((f) => f.name), ...custom.map((f) => f.field_name)];
  const lines = [header.map(cell).join(',')];
  SAMPLE_ROWS.forEach((row, i) => {
    const values = [...CONTACT_COLUMNS, ...RESERVED_EXTRAS.map((f) => f.name)].map((c) => row[c] ?? '');
    for (const f of custom) values.push(sampleValue(f.field_type, f.field_name, i));
    lines.push(values.map(cell).join(','));
  });
  return '\uFEFF' + lines.join('\r\n') + '\r\n';
}
