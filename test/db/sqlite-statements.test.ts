import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { cachingStatements } from '../../src/db/index.js';

/** A small table with every kind of value SQLite returns. */
function sampleDb(): SQLite.Database {
  const sqlite = new SQLite(':memory:');
  sqlite.exec(`create table t (id integer primary key, n integer, r real, s text, b blob, z text);
    insert into t (n, r, s, b, z) values (1, 1.5, 'one', x'01ff', null), (-2, 0, '', x'', 'zed'), (null, null, null, null, null);`);
  return sqlite;
}

describe('SQLite statements: one prepared statement per SQL text', () => {
  it('prepares a SQL text once and reuses it, up to the bound (the oldest goes first)', () => {
    const statements = cachingStatements(sampleDb(), 2);
    const first = statements.prepare('select id from t');
    assert.equal(statements.prepare('select id from t'), first);
    statements.prepare('select n from t');
    statements.prepare('select r from t');
    assert.notEqual(statements.prepare('select id from t'), first, 'evicted, so prepared anew');
  });

  it('runs reads and writes on the cached statement, with fresh parameters each time', () => {
    const statements = cachingStatements(sampleDb());
    const result = statements.prepare('update t set n = 9 where id < ?').run(3);
    assert.equal(result.changes, 2);
    assert.deepEqual(statements.prepare('select n from t order by id').all(), [{ n: 9 }, { n: 9 }, { n: null }]);
    assert.deepEqual(statements.prepare('select id from t where id > ? order by id').all(1), [{ id: 2 }, { id: 3 }]);
    assert.deepEqual(statements.prepare('select id from t where id > ? order by id').all(2), [{ id: 3 }]);
  });
});

describe('SQLite statements: rows built as object literals', () => {
  it('gives the same rows as better-sqlite3 itself, by all() and by iterate(), for every kind of value', () => {
    const sqlite = sampleDb();
    const statements = cachingStatements(sqlite);
    const sql = 'select * from t order by id';
    const plain = sqlite.prepare(sql).all();
    assert.deepEqual(statements.prepare(sql).all(), plain);
    assert.deepEqual([...statements.prepare(sql).iterate()], plain);
    assert.deepEqual(Object.keys((statements.prepare(sql).all() as object[])[0]), ['id', 'n', 'r', 's', 'b', 'z']);
  });

  it('leaves a statement with a column named __proto__ to better-sqlite3 (a literal would set the prototype)', () => {
    const sqlite = sampleDb();
    const sql = 'select s as "__proto__", id from t where id = 1';
    const [row] = cachingStatements(sqlite).prepare(sql).all() as object[];
    const [plain] = sqlite.prepare(sql).all() as object[];
    assert.equal(Object.getPrototypeOf(row), Object.getPrototypeOf(plain));
    assert.deepEqual(Object.entries(row), Object.entries(plain));
  });
});
