import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { Database } from '../../src/db/index.js';
import { copyRows } from '../../src/db/dialect.js';
import { ENGINE, freshDatabase } from '../helpers.js';

describe('copyRows: COPY into a table on PostgreSQL', { skip: ENGINE !== 'postgres' && 'PostgreSQL only (SQLite has no COPY)' }, () => {
  let database: Database;
  let drop: () => Promise<void>;
  before(async () => {
    ({ database, drop } = await freshDatabase());
    await sql`create table copied (a text, n int4)`.execute(database.db);
  });
  after(() => drop());

  const rowsOf = async () =>
    (await sql<{ a: string | null; n: number | null }>`select a, n from copied order by n`.execute(database.db)).rows;

  it('stores any text as it is, empty text as empty and null as null, in one transaction', async () => {
    const awkward = [
      'plain',
      'a "quoted" word',
      'comma, semicolon; tab\there',
      'line\nbreak\r\nand CR\r',
      'back\\slash \\N',
      '\\.',
      '',
      '  spaces  ',
      'Zoë 東京 🙂',
    ];
    await database.transactionWithClient(async (_trx, client) => {
      assert.ok(client, 'PostgreSQL gives the transaction its connection');
      const copy = copyRows(client, 'copied', ['a', 'n']);
      await copy.write(awkward.slice(0, 4).map((a, i) => [a, String(i)]));
      await copy.write([...awkward.slice(4).map((a, i) => [a, String(i + 4)]), [null, '99']]);
      await copy.end();
    });
    assert.deepEqual(await rowsOf(), [...awkward.map((a, n) => ({ a, n })), { a: null, n: 99 }]);
  });

  it('rejects at the end when PostgreSQL refuses a row, and the transaction rolls back', async () => {
    await sql`delete from copied`.execute(database.db);
    await assert.rejects(
      database.transactionWithClient(async (_trx, client) => {
        const copy = copyRows(client!, 'copied', ['a', 'n']);
        await copy.write([
          ['fine', '1'],
          ['bad', 'not a number'],
        ]);
        await copy.end();
      }),
      { code: '22P02' },
    );
    assert.deepEqual(await rowsOf(), []);
  });

  it('abandons a COPY under way so that the transaction can roll back (no hang)', { timeout: 10_000 }, async () => {
    await assert.rejects(
      database.transactionWithClient(async (_trx, client) => {
        const copy = copyRows(client!, 'copied', ['a', 'n']);
        await copy.write([['kept?', '1']]);
        await copy.abort();
        throw new Error('the import failed');
      }),
      /the import failed/,
    );
    assert.deepEqual(await rowsOf(), []);
  });
});
