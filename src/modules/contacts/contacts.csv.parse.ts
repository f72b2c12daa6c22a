import { open } from 'node:fs/promises';
import { label, messages } from '../../http/messages.js';
import { CONTACT_COLUMNS, RESERVED_EXTRAS, type FieldType } from '../../reference/fields.js';
import { findCountry } from '../../reference/geo.js';
import { isEmail } from '../../util/email.js';
import { recordBatches, type Delimiter, type RecordSource, type ScanError } from './contacts.csv.records.js';
import { fieldTypeMessage, fitsFieldType } from './contacts.values.js';

/** The contact's own columns, in this order in `ImportRow.values`. */
export const STD_COLUMNS: readonly string[] = CONTACT_COLUMNS;
const EMAIL = STD_COLUMNS.indexOf('email');
const ALT_EMAIL = STD_COLUMNS.indexOf('alt_email');
const COUNTRY = STD_COLUMNS.indexOf('country');
/** Longest accepted text per standard column (as the add endpoint's schema). */
const STD_MAX = STD_COLUMNS.map((c) => (c === 'postal_code' ? 32 : c === 'email' || c === 'alt_email' ? 254 : 255));

/** A field kept in `custom_field`: one of the six reserved extras or a custom field. */
interface ValueColumn {
  at: number;
  name: string;
  type: FieldType | string;
  max: number;
}

/** How the header's columns map to fields. */
export interface HeaderPlan {
  /** CSV column index of each of `STD_COLUMNS`, -1 when absent. */
  std: number[];
  custom: ValueColumn[];
  /** Header names that match no field (their values are ignored). */
  ignored: string[];
  /** Required columns the header lacks (`email`, `country`). */
  missing: string[];
}

/** A valid data row: the standard columns (null = empty cell) and its custom values as stored JSON text. */
export interface ImportRow {
  values: (string | null)[];
  custom: string | null;
}

export interface RowError {
  row: number;
  field: string;
  message: string;
}

/** What the reader yields: the header plan first, then batches of rows. */
export type CsvMessage = { kind: 'header'; plan: HeaderPlan } | { kind: 'batch'; rows: ImportRow[]; skipped: number; errors: RowError[] };

/** How to read a file: its delimiter, the account's custom fields, rows per batch, errors kept. */
export interface ReadOptions {
  delimiter: Delimiter;
  customFields: ReadonlyArray<{ name: string; type: string }>;
  batchSize: number;
  maxErrors: number;
}

/** A file that cannot be read as CSV; `text` is the message for the `file` field. */
export class CsvFormatError extends Error {
  constructor(readonly text: string) {
    super(text);
  }
}

const SNIFF_BYTES = 64 * 1024;

/**
 * Looks at the start of the file: the delimiter (`,` `;` or tab, whichever the header line holds
 * most of outside quotes; `,` on a tie), whether the file has any content at all, and its size.
 */
export async function sniffCsv(path: string): Promise<{ delimiter: Delimiter; empty: boolean; bytes: number }> {
  const handle = await open(path, 'r');
  try {
    const buf = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await handle.read(buf, 0, SNIFF_BYTES, 0);
    const text = buf.toString('utf8', 0, bytesRead).replace(/^\uFEFF/, '');
    const counts: Record<Delimiter, number> = { ',': 0, ';': 0, '\t': 0 };
    let quoted = false;
    for (const ch of text) {
      if (ch === '"') quoted = !quoted;
      else if (!quoted && (ch === '\n' || ch === '\r')) break;
      else if (!quoted && (ch === ',' || ch === ';' || ch === '\t')) counts[ch]++;
    }
    const delimiter = (Object.keys(counts) as Delimiter[]).reduce((best, d) => (counts[d] > counts[best] ? d : best), ',' as Delimiter);
    return { delimiter, empty: bytesRead < SNIFF_BYTES && text.trim() === '', bytes: (await handle.stat()).size };
  } finally {
    await handle.close();
  }
}

/** `First Name`, `first-name`, `FIRST_NAME` → `first_name`. */
function headerKey(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
}

/**
 * Maps header names to fields, case-insensitively: the contact's columns, the six reserved extras,
 * then the account's custom fields (`customFields`: name → type). The first column for a field
 * wins; later ones and unknown names are ignored.
 */
export function planHeader(header: string[], customFields: ReadonlyArray<{ name: string; type: string }>): HeaderPlan {
  const valueFields = new Map<string, { name: string; type: string; max: number }>();
  for (const f of RESERVED_EXTRAS) valueFields.set(f.name, { name: f.name, type: f.type, max: 255 });
  for (const f of customFields)
    if (!valueFields.has(f.name.toLowerCase())) valueFields.set(f.name.toLowerCase(), { name: f.name, type: f.type, max: 2000 });
  const plan: HeaderPlan = { std: STD_COLUMNS.map(() => -1), custom: [], ignored: [], missing: [] };
  const taken = new Set<string>();
  header.forEach((raw, at) => {
    const key = headerKey(raw);
    if (key === '') return;
    const std = STD_COLUMNS.indexOf(key);
    const value = valueFields.get(key);
    const field = std >= 0 ? STD_COLUMNS[std] : value?.name;
    if (field === undefined || taken.has(field)) {
      plan.ignored.push(raw.trim());
      return;
    }
    taken.add(field);
    if (std >= 0) plan.std[std] = at;
    else plan.custom.push({ at, name: value!.name, type: value!.type, max: value!.max });
  });
  for (const required of [EMAIL, COUNTRY]) if (plan.std[required] < 0) plan.missing.push(STD_COLUMNS[required]);
  return plan;
}

/**
 * Checks one record against the plan. Returns the row, or null after reporting each failing field
 * through `fail` (the row is then skipped: bad data is never stored).
 */
export function checkRecord(record: string[], plan: HeaderPlan, fail: (field: string, message: string) => void): ImportRow | null {
  const values: (string | null)[] = new Array(STD_COLUMNS.length);
  let ok = true;
  for (let c = 0; c < values.length; c++) {
    const at = plan.std[c];
    const v = at >= 0 && at < record.length ? record[at].trim() : '';
    if (v === '') {
      values[c] = null;
      continue;
    }
    values[c] = v;
    if (v.length > STD_MAX[c] && c !== EMAIL && c !== ALT_EMAIL) {
      fail(STD_COLUMNS[c], messages.maxString(STD_COLUMNS[c], STD_MAX[c]));
      ok = false;
    }
  }
  const email = values[EMAIL];
  if (email === null) {
    fail('email', messages.required('email'));
    ok = false;
  } else if (!isEmail(email)) {
    fail('email', messages.email('email'));
    ok = false;
  }
  const alt = values[ALT_EMAIL];
  if (alt !== null && !isEmail(alt)) {
    fail('alt_email', messages.email('alt_email'));
    ok = false;
  }
  const country = values[COUNTRY];
  if (country === null) {
    fail('country', messages.required('country'));
    ok = false;
  } else {
    const found = findCountry(country);
    if (found) values[COUNTRY] = String(found.id);
    else {
      fail('country', messages.invalid('country'));
      ok = false;
    }
  }
  let custom: Record<string, string> | null = null;
  for (const f of plan.custom) {
    const v = f.at < record.length ? record[f.at].trim() : '';
    if (v === '') continue;
    if (!fitsFieldType(f.type, v)) {
      fail(f.name, fieldTypeMessage(f.type, label(f.name)));
      ok = false;
    } else if (v.length > f.max) {
      fail(f.name, messages.maxString(f.name, f.max));
      ok = false;
    } else (custom ??= {})[f.name] = v;
  }
  return ok ? { values, custom: custom ? JSON.stringify(custom) : null } : null;
}

/** A scan failure (`ScanError`) → the text reported on the `file` field, naming the row it started on. */
function formatError(err: ScanError): CsvFormatError {
  // `records` counts the records read before the failing one (blank lines included, like our rows).
  const where = typeof err.records === 'number' ? ` (row ${err.records + 1})` : '';
  const reason =
    err.code === 'CSV_QUOTE_NOT_CLOSED'
      ? 'a quoted value is never closed'
      : err.code === 'CSV_MAX_RECORD_SIZE'
        ? 'a row is longer than 1,000,000 characters; is a quote left open'
        : err.code === 'CSV_NUL_CHARACTER'
          ? 'it holds NUL characters; save it as UTF-8 text'
          : 'it cannot be read';
  return new CsvFormatError(`The file is not a valid CSV file: ${reason}${where}.`);
}

/** Scan errors become the `file` field's message; others (disk) pass through. */
function asFormatError(err: unknown): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('CSV_') ? formatError(err as ScanError) : err;
}

/**
 * Streams a CSV file of contacts: yields the header plan, then batches of checked rows with the
 * rows skipped and the first `maxErrors` errors. Row numbers count records with the header as row
 * 1 (so they match a spreadsheet's row numbers unless a quoted value spans lines); blank records
 * are neither imported nor reported. Throws `CsvFormatError` when the file is not valid CSV.
 * `source` reads the records (`recordBatches` unless a test gives another).
 */
export async function* readContactCsv(path: string, opts: ReadOptions, source: RecordSource = recordBatches): AsyncGenerator<CsvMessage> {
  let plan: HeaderPlan | null = null;
  let rowNumber = 0;
  let errorsLeft = opts.maxErrors;
  const fail = (errors: RowError[]) => (field: string, message: string) => {
    if (errorsLeft > 0) {
      errors.push({ row: rowNumber, field, message });
      errorsLeft--;
    }
  };
  const batches = source(path, opts.delimiter, opts.batchSize);
  try {
    for (;;) {
      let next: IteratorResult<string[][]>;
      try {
        next = await batches.next();
      } catch (err) {
        throw asFormatError(err);
      }
      if (next.done) break;
      const rows: ImportRow[] = [];
      const errors: RowError[] = [];
      const report = fail(errors);
      let skipped = 0;
      for (const record of next.value) {
        rowNumber++;
        if (plan === null) {
          plan = planHeader(record, opts.customFields);
          yield { kind: 'header', plan };
          continue;
        }
        if (record.every((v) => v.trim() === '')) continue;
        const row = checkRecord(record, plan, report);
        if (row) rows.push(row);
        else skipped++;
      }
      if (rows.length || skipped) yield { kind: 'batch', rows, skipped, errors };
    }
  } finally {
    await batches.return(undefined);
  }
  if (plan === null) throw new CsvFormatError('The file is empty.');
}
