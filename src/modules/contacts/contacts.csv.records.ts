import { createReadStream } from 'node:fs';

/** The field separators a CSV file may use (detected from its first line). */
export type Delimiter = ',' | ';' | '\t';

/** A single record may not exceed this many characters (an unclosed quote would swallow the file). */
const MAX_RECORD_CHARS = 1_000_000;

/** Bytes read from the file at a time. */
const READ_BYTES = 256 * 1024;

/**
 * A scan failure: csv-parse's codes, and the number of records read before the failing one; or
 * `CSV_NUL_CHARACTER` (no count), for text no database can store (PostgreSQL refuses it in text):
 * as a rule a UTF-16 file, whose every other byte is zero.
 */
export type ScanError = Error & { code: 'CSV_QUOTE_NOT_CLOSED' | 'CSV_MAX_RECORD_SIZE' | 'CSV_NUL_CHARACTER'; records?: number };

/**
 * Splits CSV text into records (RFC 4180): fields end at `delimiter` (a char code), records at LF,
 * CRLF or CR; a field that starts with `"` is quoted and may hold delimiters, line ends and
 * doubled quotes. Relaxed where spreadsheets are: a quote inside an unquoted field is literal, and
 * a quoted field with text after its closing quote is kept whole, quotes included (`"5" x`).
 *
 * Appends each complete record to `out` and returns where the first incomplete one starts
 * (`text.length` when none): the caller prepends that rest to the next text. With `final`, the
 * end of the text ends the last record. Throws a `ScanError` (`records`: `before` plus the records
 * in `out`): `CSV_QUOTE_NOT_CLOSED` when the final text ends inside quotes, `CSV_MAX_RECORD_SIZE`
 * when a record, complete or not, is longer than `maxChars`.
 */
export function scanRecords(text: string, final: boolean, delimiter: number, maxChars: number, out: string[][], before: number): number {
  const n = text.length;
  const fail = (code: string, message: string) => Object.assign(new Error(message), { code, records: before + out.length });
  let i = 0;
  let start = 0;
  // The record from `start` on ends beyond this text: keep it for the next call.
  const rest = () => {
    if (n - start > maxChars) throw fail('CSV_MAX_RECORD_SIZE', 'a record is longer than the limit');
    return start;
  };
  while (i < n) {
    start = i;
    const record: string[] = [];
    for (;;) {
      let value: string;
      let c: number;
      if (i < n && text.charCodeAt(i) === 34) {
        value = '';
        let from = i + 1;
        let closed = -1;
        for (;;) {
          const q = text.indexOf('"', from);
          if (q < 0) break;
          if (q + 1 < n && text.charCodeAt(q + 1) === 34) {
            value += text.slice(from, q + 1);
            from = q + 2;
            continue;
          }
          if (q + 1 >= n && !final) break; // a doubled quote may straddle the texts
          value += text.slice(from, q);
          closed = q + 1;
          break;
        }
        if (closed < 0) {
          if (!final) return rest();
          throw fail('CSV_QUOTE_NOT_CLOSED', 'a quoted value is never closed');
        }
        i = closed;
        if (i < n && (c = text.charCodeAt(i)) !== delimiter && c !== 10 && c !== 13) {
          let end = i;
          while (end < n && (c = text.charCodeAt(end)) !== delimiter && c !== 10 && c !== 13) end++;
          if (end >= n && !final) return rest();
          value = '"' + value + '"' + text.slice(i, end);
          i = end;
        }
      } else {
        let end = i;
        while (end < n && (c = text.charCodeAt(end)) !== delimiter && c !== 10 && c !== 13) end++;
        if (end >= n && !final) return rest();
        value = text.slice(i, end);
        i = end;
      }
      record.push(value);
      if (i >= n) {
        if (!final) return rest();
        break;
      }
      c = text.charCodeAt(i);
      if (c === delimiter) {
        i++;
        continue;
      }
      if (c === 13) {
        if (i + 1 >= n && !final) return rest(); // a CRLF may straddle the texts
        i += text.charCodeAt(i + 1) === 10 ? 2 : 1;
      } else i++;
      break;
    }
    if (i - start > maxChars) throw fail('CSV_MAX_RECORD_SIZE', 'a record is longer than the limit');
    out.push(record);
  }
  return n;
}

/**
 * Records from a stream of UTF-8 text, in arrays of up to `size`: skips a leading BOM, scans each
 * chunk with what the previous one left unfinished, refuses text with NUL characters.
 */
export async function* recordsOf(
  chunks: AsyncIterable<string>,
  delimiter: string,
  size: number,
  maxChars: number,
): AsyncGenerator<string[][]> {
  const d = delimiter.charCodeAt(0);
  let pending: string[][] = [];
  let yielded = 0;
  let rest = '';
  let first = true;
  for await (const chunk of chunks) {
    if (chunk.indexOf('\u0000') >= 0) throw Object.assign(new Error('the text holds NUL characters'), { code: 'CSV_NUL_CHARACTER' });
    let text = rest + chunk;
    if (first) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      first = false;
    }
    const at = scanRecords(text, false, d, maxChars, pending, yielded);
    rest = at < text.length ? text.slice(at) : '';
    while (pending.length >= size) {
      yield pending.slice(0, size);
      pending = pending.slice(size);
      yielded += size;
    }
  }
  if (rest !== '') scanRecords(rest, true, d, maxChars, pending, yielded);
  for (let at = 0; at < pending.length; at += size) yield pending.slice(at, at + size);
}

/** Where records come from: arrays of up to `size`; scan errors (`ScanError`) are thrown as they are. */
export type RecordSource = (path: string, delimiter: Delimiter, size: number) => AsyncGenerator<string[][]>;

/** Reads records in this thread; the file is read only as fast as batches are taken. */
export function recordBatches(path: string, delimiter: Delimiter, size: number): AsyncGenerator<string[][]> {
  return recordsOf(createReadStream(path, { encoding: 'utf8', highWaterMark: READ_BYTES }), delimiter, size, MAX_RECORD_CHARS);
}
