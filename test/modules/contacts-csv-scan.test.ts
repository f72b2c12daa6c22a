import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parse } from 'csv-parse/sync';
import { recordsOf, scanRecords } from '../../src/modules/contacts/contacts.csv.records.js';

const MAX = 1_000_000;

/** All records of `text` fed to `recordsOf` in the given pieces, or the scan error's code and count. */
async function scan(pieces: string[], delimiter = ',', size = 3, max = MAX): Promise<string[][] | { code: string; records: number }> {
  async function* chunks() {
    for (const p of pieces) yield p;
  }
  const out: string[][] = [];
  try {
    for await (const batch of recordsOf(chunks(), delimiter, size, max)) {
      assert.ok(batch.length > 0 && batch.length <= size);
      out.push(...batch);
    }
    return out;
  } catch (err) {
    const { code, records } = err as { code: string; records: number };
    return { code, records };
  }
}

/** csv-parse's reading of the same text with the options the importer used before the scanner. */
function reference(text: string, delimiter = ','): string[][] | { code: string; records: number } {
  try {
    return parse(text, { bom: true, delimiter, relax_column_count: true, relax_quotes: true, max_record_size: MAX });
  } catch (err) {
    const { code, records } = err as { code: string; records: number };
    return { code, records };
  }
}

/** `text` cut at the given offsets (sorted, deduplicated). */
function cut(text: string, at: number[]): string[] {
  const points = [...new Set(at.map((a) => a % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const p of points) {
    pieces.push(text.slice(from, p));
    from = p;
  }
  pieces.push(text.slice(from));
  return pieces.filter((p) => p !== '');
}

describe('CSV scanner', () => {
  it('reads RFC 4180 records: quotes, doubled quotes, delimiters and line breaks inside quotes', async () => {
    const text = '\uFEFFa,"b,c","say ""hi""","two\r\nlines"\r\n,x,\r\n\r\n"last"';
    assert.deepEqual(await scan([text]), [['a', 'b,c', 'say "hi"', 'two\r\nlines'], ['', 'x', ''], [''], ['last']]);
  });

  it('ends records at LF, CRLF or CR, mixed in one file', async () => {
    assert.deepEqual(await scan(['a\nb\r\nc\rd\n']), [['a'], ['b'], ['c'], ['d']]);
  });

  it('keeps quotes inside unquoted values and after a closing quote literally', async () => {
    assert.deepEqual(await scan(['5" screen,"12" x,"a""b"c\n']), [['5" screen', '"12" x', '"a"b"c']]);
  });

  it('reports an unclosed quote with the number of records before it', async () => {
    assert.deepEqual(await scan(['a\nb\n"c,d\ne\n']), { code: 'CSV_QUOTE_NOT_CLOSED', records: 2 });
  });

  it('refuses a record longer than the limit, finished or not', async () => {
    assert.deepEqual(await scan(['ok\n' + 'x'.repeat(50) + '\n'], ',', 3, 40), { code: 'CSV_MAX_RECORD_SIZE', records: 1 });
    // An open quote never reaches the end of the text: the scan stops at the limit, not at the end.
    assert.deepEqual(await scan(['ok\n"', 'y'.repeat(30), 'y'.repeat(30), 'z'], ',', 3, 40), { code: 'CSV_MAX_RECORD_SIZE', records: 1 });
  });

  it('returns the start of an unfinished record for the next text', () => {
    const out: string[][] = [];
    assert.equal(scanRecords('a,b\nc,"d', false, 44, MAX, out, 0), 4);
    assert.deepEqual(out, [['a', 'b']]);
    // A CR at the end may be the first half of a CRLF; a quote at the end may be half of a doubled one.
    assert.equal(scanRecords('a\r', false, 44, MAX, [], 0), 0);
    assert.equal(scanRecords('"a"', false, 44, MAX, [], 0), 0);
  });

  it('reads like csv-parse, whatever the chunking, for files with one kind of line end', async () => {
    const token = fc.constantFrom('a', 'b', ' ', '"', ',', ';', '\t', '\n', 'é', '""', '\uFEFF');
    await fc.assert(
      fc.asyncProperty(
        fc.array(token, { maxLength: 40 }),
        fc.constantFrom('\n', '\r\n', '\r'),
        fc.constantFrom(',', ';', '\t'),
        fc.array(fc.nat(), { maxLength: 6 }),
        async (tokens, eol, delimiter, at) => {
          const text = tokens.join('').replace(/\n/g, eol);
          assert.deepEqual(await scan(cut(text, at), delimiter), reference(text, delimiter), JSON.stringify(text));
        },
      ),
      { numRuns: 3000 },
    );
  });
});
