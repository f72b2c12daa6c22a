import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import type { DB } from './types.js';
import type { Engine } from './dialect.js';

export type Db = Kysely<DB>;

export interface Database {
  readonly db: Db;
  readonly engine: Engine;
  close(): Promise<void>;
}

// int8 (count(*), sums) arrives as text by default; our counts fit in a JS number.
pg.types.setTypeParser(20, (v) => Number(v));

/** Opens the database named by a URL: `sqlite:<path>`, `sqlite::memory:` or `postgres://…`. */
export function createDb(url: string): Database {
  if (/^postgres(ql)?:\/\//.test(url)) {
    const pool = new pg.Pool({ connectionString: url, max: Number(process.env.PG_POOL_MAX ?? 10) });
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    return { db, engine: 'postgres', close: () => db.destroy() };
  }
  const path = url.replace(/^sqlite:(\/\/)?/, '') || ':memory:';
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new SQLite(path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('cache_size = -65536');
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: sqlite }) });
  return { db, engine: 'sqlite', close: () => db.destroy() };
}
