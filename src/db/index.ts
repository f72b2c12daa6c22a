import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresDialect, SqliteDialect, type CompiledQuery } from 'kysely';
import type { DB } from './types.js';
import type { Engine } from './dialect.js';

export type Db = Kysely<DB>;

export interface Database {
  readonly db: Db;
  readonly engine: Engine;
  /**
   * Runs a compiled read query. On SQLite outside any transaction it runs at once on a cached
   * statement, skipping Kysely's connection queue (the hot paths: auth, details); inside one it
   * queues like any query, so it never reads another request's uncommitted writes.
   */
  read<R>(query: CompiledQuery<R>): Promise<R[]>;
  close(): Promise<void>;
}

// int8 (count(*), sums) arrives as text by default; our counts fit in a JS number.
pg.types.setTypeParser(20, (v) => Number(v));

/** Opens the database named by a URL: `sqlite:<path>`, `sqlite::memory:` or `postgres://…`. */
export function createDb(url: string): Database {
  if (/^postgres(ql)?:\/\//.test(url)) {
    const pool = new pg.Pool({ connectionString: url, max: Number(process.env.PG_POOL_MAX ?? 10) });
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    // Hot reads run as named (server-side prepared) statements: PostgreSQL parses and plans each
    // once per connection instead of on every request.
    const names = new Map<string, string>();
    const read = async <R>(q: CompiledQuery<R>): Promise<R[]> => {
      let name = names.get(q.sql);
      if (!name) names.set(q.sql, (name = `hot_${names.size}`));
      return (await pool.query({ name, text: q.sql, values: q.parameters as unknown[] })).rows as R[];
    };
    return { db, engine: 'postgres', read, close: () => db.destroy() };
  }
  const path = url.replace(/^sqlite:(\/\/)?/, '') || ':memory:';
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new SQLite(path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('cache_size = -16384');
  const statements = cachingStatements(sqlite);
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: statements }) });
  const read = async <R>(q: CompiledQuery<R>): Promise<R[]> =>
    sqlite.inTransaction ? (await db.executeQuery(q)).rows : (statements.prepare(q.sql).all(...(q.parameters as unknown[])) as R[]);
  return { db, engine: 'sqlite', read, close: () => db.destroy() };
}

/**
 * better-sqlite3 with a bounded cache of prepared statements: Kysely's SQLite driver prepares every
 * query anew, which costs more than running a short indexed query. Statements are reused by SQL
 * text (safe: Kysely runs one query at a time on the single connection).
 */
function cachingStatements(sqlite: SQLite.Database, max = 500) {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      let stmt = cache.get(sql);
      if (stmt) return stmt;
      stmt = sqlite.prepare(sql);
      if (cache.size >= max) cache.delete(cache.keys().next().value!);
      cache.set(sql, stmt);
      return stmt;
    },
  };
}
