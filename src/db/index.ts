import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresDialect, SqliteDialect, type CompiledQuery } from 'kysely';
import type { DB } from './types.js';
import type { Engine } from './dialect.js';
import { watchAccounts } from './accounts-watch.js';
import { createListener, type Listener } from './listener.js';

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
  /**
   * A number that changes whenever the accounts may have changed, by this process or another, read
   * without a query. SQLite: whenever any data may have changed (`total_changes()` and `PRAGMA
   * data_version`, about 1 µs). PostgreSQL, with `server`: when a notification from the accounts
   * trigger arrives (`watchAccounts`), and undefined while it cannot hear them. Absent otherwise.
   * Without a version callers keep nothing between requests.
   */
  readonly version?: () => number | undefined;
  /** PostgreSQL with `server`: the process's one LISTENing connection (`createListener`). */
  readonly listener?: Listener;
  /**
   * Runs `fn` in one transaction, as `db.transaction()` does, and gives it the transaction's own
   * connection on PostgreSQL (null on SQLite), for what Kysely cannot say: `COPY` (`copyRows`).
   */
  transactionWithClient<T>(fn: (trx: Db, client: pg.PoolClient | null) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

// int8 (count(*), sums) arrives as text by default; our counts fit in a JS number.
pg.types.setTypeParser(20, (v) => Number(v));

export interface DbOptions {
  /**
   * For a long-running server; the CLI's short runs leave it off. PostgreSQL: the process's
   * listening connection (`listener`), which hears changes to accounts (`watchAccounts`) and gives
   * `version`. SQLite: no difference.
   */
  server?: boolean;
}

/** Opens the database named by a URL: `sqlite:<path>`, `sqlite::memory:` or `postgres://…`. */
export function createDb(url: string, options: DbOptions = {}): Database {
  if (/^postgres(ql)?:\/\//.test(url)) {
    const pool = new pg.Pool({ connectionString: url, max: Number(process.env.PG_POOL_MAX ?? 10) });
    // An idle connection that breaks (a server restart, an administrator's terminate) is an 'error'
    // event on the pool, which would end the process unheard; the pool drops that connection and
    // opens a new one when next needed.
    pool.on('error', () => undefined);
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    // Hot reads run as named (server-side prepared) statements: PostgreSQL parses and plans each
    // once per connection instead of on every request.
    const names = new Map<string, string>();
    const read = async <R>(q: CompiledQuery<R>): Promise<R[]> => {
      let name = names.get(q.sql);
      if (!name) names.set(q.sql, (name = `hot_${names.size}`));
      return (await pool.query({ name, text: q.sql, values: q.parameters as unknown[] })).rows as R[];
    };
    const listener = options.server ? createListener(url) : undefined;
    const close = async () => {
      await listener?.close();
      await db.destroy();
    };
    const transactionWithClient = <T>(fn: (trx: Db, client: pg.PoolClient | null) => Promise<T>) => onOneClient(pool, fn);
    return { db, engine: 'postgres', read, version: listener && watchAccounts(listener), listener, transactionWithClient, close };
  }
  const path = url.replace(/^sqlite:(\/\/)?/, '') || ':memory:';
  if (path !== ':memory:') createPrivateFile(path);
  const sqlite = new SQLite(path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  // Deleted rows are overwritten with zeros (in their page, and whole freed pages), so an erased
  // contact's data does not linger in free space of the file (docs/privacy.md).
  sqlite.pragma('secure_delete = ON');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('cache_size = -16384');
  // A big import grows the WAL to its size (SQLite checkpoints at its commit); the next reset
  // after a checkpoint trims the file back.
  sqlite.pragma('journal_size_limit = 67108864');
  const statements = cachingStatements(sqlite);
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: statements }) });
  const read = async <R>(q: CompiledQuery<R>): Promise<R[]> =>
    sqlite.inTransaction ? (await db.executeQuery(q)).rows : (statements.prepare(q.sql).all(...(q.parameters as unknown[])) as R[]);
  const close = () => db.destroy();
  const transactionWithClient = <T>(fn: (trx: Db, client: pg.PoolClient | null) => Promise<T>) =>
    db.transaction().execute((trx) => fn(trx, null));
  return { db, engine: 'sqlite', read, version: changeCounter(sqlite), transactionWithClient, close };
}

/**
 * Creates the database file, when it does not exist yet, readable and writable by its owner alone
 * (0600, as the generated app secret): it holds every contact and the accounts' key hashes. An
 * empty file is a new SQLite database. SQLite gives the `-wal` and `-shm` files it makes next to
 * it the same mode. An existing file keeps the mode its owner gave it.
 */
function createPrivateFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  closeSync(openSync(path, 'a', 0o600));
}

/**
 * A transaction on one connection taken from `pool`, run by a Kysely bound to that connection
 * alone, so the caller's raw statements on `client` share the transaction. A failed transaction
 * discards the connection rather than return it in an unknown state.
 */
async function onOneClient<T>(pool: pg.Pool, fn: (trx: Db, client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  const single = { connect: async () => ({ query: client.query.bind(client), release: () => undefined }), end: async () => undefined };
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: single as unknown as pg.Pool }) });
  let failure: Error | undefined;
  try {
    return await db.transaction().execute((trx) => fn(trx, client));
  } catch (err) {
    failure = err instanceof Error ? err : new Error(String(err));
    throw err;
  } finally {
    client.release(failure);
  }
}

/** `Database.version` for SQLite: bumped when this connection changed rows or another one committed. */
function changeCounter(sqlite: SQLite.Database): () => number {
  const ownChanges = sqlite.prepare('select total_changes()').pluck();
  const othersCommits = sqlite.prepare('pragma data_version').pluck();
  let changes = -1;
  let commits = -1;
  let version = 0;
  return () => {
    const c = ownChanges.get() as number;
    const d = othersCommits.get() as number;
    if (c !== changes || d !== commits) {
      changes = c;
      commits = d;
      version++;
    }
    return version;
  };
}

/**
 * better-sqlite3 with a bounded cache of prepared statements: Kysely's SQLite driver prepares every
 * query anew, which costs more than running a short indexed query. Statements are reused by SQL
 * text (safe: Kysely runs one query at a time on the single connection).
 */
export function cachingStatements(sqlite: SQLite.Database, max = 500) {
  const cache = new Map<string, Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string): Statement {
      let stmt = cache.get(sql);
      if (stmt) return stmt;
      stmt = rowsAsLiterals(sqlite.prepare(sql));
      if (cache.size >= max) cache.delete(cache.keys().next().value!);
      cache.set(sql, stmt);
      return stmt;
    },
  };
}

/** The part of a better-sqlite3 statement that Kysely's driver and `read` use. */
type Statement = Pick<SQLite.Statement, 'reader' | 'all' | 'iterate' | 'run'>;

/**
 * A reader statement that fetches rows as arrays and builds each object with one generated object
 * literal. better-sqlite3 adds a row's properties one by one, which is slower to build and leaves
 * V8 objects that serialise slower; the literal gives every row of a statement one shape.
 */
function rowsAsLiterals(stmt: SQLite.Statement): Statement {
  if (!stmt.reader) return stmt;
  const names = stmt.columns().map((c) => c.name);
  // `__proto__` as a literal key would set the prototype; such a statement keeps the plain objects.
  if (names.includes('__proto__')) return stmt;
  const toRow = new Function('r', `return {${names.map((n, i) => `${JSON.stringify(n)}: r[${i}]`).join(', ')}};`) as (
    r: unknown[],
  ) => unknown;
  stmt.raw(true);
  return {
    reader: true,
    run: (...params: unknown[]) => stmt.run(...params),
    all: (...params: unknown[]) => (stmt.all(...params) as unknown[][]).map(toRow),
    *iterate(...params: unknown[]) {
      for (const r of stmt.iterate(...params) as IterableIterator<unknown[]>) yield toRow(r);
    },
  } as Statement;
}
