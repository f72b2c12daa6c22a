import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { PostgresAdapter, sql, type ColumnDefinitionBuilder, type Kysely, type RawBuilder, type Transaction } from 'kysely';

/** Every difference between SQLite and PostgreSQL lives in this file. */
export type Engine = 'sqlite' | 'postgres';

/** Which engine a Kysely instance (or transaction) talks to. */
export function engineOf(db: Kysely<any> | Transaction<any>): Engine {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/**
 * A text column compared byte by byte (code point order), as the index of migration 018 holds it:
 * on PostgreSQL with `collate "C"` (the database's own collation may ignore punctuation), on SQLite
 * as it is (SQLite compares text bytewise).
 */
export function byteOrder(engine: Engine, column: string): RawBuilder<string> {
  return engine === 'postgres' ? sql<string>`(${sql.ref(column)} collate "C")` : sql<string>`${sql.ref(column)}`;
}

/** Adds an auto-incrementing integer primary key `id`. */
export function withId<T extends { addColumn: (...a: any[]) => T }>(engine: Engine, table: T): T {
  return engine === 'postgres'
    ? table.addColumn('id', 'serial', (c: ColumnDefinitionBuilder) => c.primaryKey())
    : table.addColumn('id', 'integer', (c: ColumnDefinitionBuilder) => c.primaryKey().autoIncrement());
}

/** The column type of raw bytes: `bytea` on PostgreSQL, `blob` on SQLite (both read back as a Buffer). */
export function binaryType(engine: Engine): 'bytea' | 'blob' {
  return engine === 'postgres' ? 'bytea' : 'blob';
}

/**
 * Serialises the media uploads of one account until the transaction ends (PostgreSQL advisory
 * lock; SQLite has a single writer already), so two concurrent uploads cannot both pass the quota.
 */
export async function lockAccountMedia(db: Kysely<any> | Transaction<any>, userId: number): Promise<void> {
  if (engineOf(db) === 'postgres') await sql`select pg_advisory_xact_lock(34, ${userId}::int)`.execute(db);
}

/** The text value of key `name` inside a JSON text column (null when absent). */
export function jsonText(engine: Engine, column: string, name: string): RawBuilder<string | null> {
  return engine === 'postgres'
    ? sql<string | null>`(${sql.ref(column)}::jsonb ->> ${name})`
    : sql<string | null>`json_extract(${sql.ref(column)}, ${'$."' + name.replace(/"/g, '') + '"'})`;
}

/** Removes key `name` from a JSON text column. */
export function jsonRemove(engine: Engine, column: string, name: string): RawBuilder<string | null> {
  return engine === 'postgres'
    ? sql<string | null>`((${sql.ref(column)}::jsonb - ${name})::text)`
    : sql<string | null>`json_remove(${sql.ref(column)}, ${'$."' + name.replace(/"/g, '') + '"'})`;
}

/** Converts a count() result (bigint text on PostgreSQL) to a number. */
export function toCount(value: unknown): number {
  return typeof value === 'number' ? value : Number(value ?? 0);
}

/**
 * A text expression read as a number, or null when it is not one. A plain cast would fail on
 * bad text on PostgreSQL (aborting the query) and read it as 0 on SQLite.
 */
export function numericOrNull(engine: Engine, text: RawBuilder<unknown>): RawBuilder<number | null> {
  return engine === 'postgres'
    ? // substring(… from regex) is the text when it is a number, else null: one evaluation of `text`.
      sql<number | null>`(substring(${text} from '^[-+]?(?:[0-9]+\\.?[0-9]*|\\.[0-9]+)$'))::numeric`
    : sql<number | null>`(case when ${text} glob '*[^0-9.+-]*' or ${text} not glob '*[0-9]*' then null else cast(${text} as real) end)`;
}

/**
 * Serialises segment membership updates of one account until the transaction ends (PostgreSQL
 * advisory lock; SQLite has a single writer already), so two concurrent changes cannot leave a
 * member computed from a stale snapshot.
 */
export async function lockAccountSegments(db: Kysely<any> | Transaction<any>, userId: number): Promise<void> {
  if (engineOf(db) === 'postgres') await sql`select pg_advisory_xact_lock(8, ${userId}::int)`.execute(db);
}

/** An `isoMicros` text expression moved on by `seconds` whole seconds, as `isoMicros` text again. */
export function isoPlusSeconds(engine: Engine, iso: RawBuilder<unknown>, seconds: number): RawBuilder<string> {
  return engine === 'postgres'
    ? sql<string>`to_char((cast(${iso} as timestamptz) at time zone 'UTC') + make_interval(secs => ${seconds}), 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`
    : sql<string>`(strftime('%Y-%m-%dT%H:%M:%S', ${iso}, ${`+${seconds} seconds`}) || substr(${iso}, 20))`;
}

/** Whether an error is a unique-constraint violation (either engine). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** A value the same in every row of a `bulkRows` insert (its last columns). */
export type BulkConstant = number | string;

/**
 * SQLite: the row source of a many-row `INSERT INTO t (cols) <rows>`: `values (?, …), …`, one
 * parameter per value (stay under SQLite's 32,766), then the `constants` shared by every row,
 * inline. PostgreSQL loads many rows with `copyRows` instead.
 */
export function bulkRows(rows: readonly unknown[][], constants: readonly BulkConstant[] = []): RawBuilder<unknown> {
  const values = sql`values ${sql.join(rows.map((r) => sql`(${sql.join(r)})`))}`;
  if (constants.length === 0) return values;
  // Constants once, inline: fewer parameters to bind and a shorter statement to prepare (SQLite
  // prepares every statement it runs). `where true` keeps `… ON CONFLICT` unambiguous for SQLite.
  const shared = constants.map((c) => sql`, ${sql.lit(c)}`);
  return sql`select *${sql.join(shared, sql``)} from (${values}) where true`;
}

/**
 * The parameters `bulkRows` binds, in its order, without building a query: lets a caller compile
 * the statement once and run it again on other rows of the same count (and the same constants).
 */
export function bulkRowsParams(rows: readonly unknown[][]): unknown[] {
  const out: unknown[] = [];
  for (const r of rows) for (const v of r) out.push(v);
  return out;
}

/** A PostgreSQL `COPY … FROM STDIN` under way: rows go in with `write`, `end` completes it. */
export interface RowCopy {
  /** Sends rows of text or null values, one per column; resolves when the connection takes more. */
  write(rows: readonly (string | null)[][]): Promise<void>;
  /** Ends the COPY; rejects with PostgreSQL's error if it refused a row. */
  end(): Promise<void>;
  /** Abandons the COPY (PostgreSQL discards its rows), so the connection can roll back. */
  abort(): Promise<void>;
}

/** One value as a field of COPY's CSV format: quoted text, or nothing for null. */
function copyField(v: string | null): string {
  if (v === null) return '';
  return v.includes('"') ? `"${v.replace(/"/g, '""')}"` : `"${v}"`;
}

/**
 * Starts `COPY table (columns) FROM STDIN` on a PostgreSQL connection (in CSV format, where
 * quoted text is taken as it is and an empty unquoted field is null). The standard way to load
 * many rows: PostgreSQL parses no statement and binds no parameter per row.
 */
export function copyRows(client: pg.PoolClient, table: string, columns: readonly string[]): RowCopy {
  const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
  const stream = client.query(copyFrom(`copy ${ident(table)} (${columns.map(ident).join(', ')}) from stdin (format csv)`));
  let failure: Error | null = null;
  stream.on('error', (err) => (failure ??= err));
  const done = new Promise<void>((resolve, reject) => {
    stream.once('finish', resolve);
    stream.once('error', reject);
    stream.once('close', () => (failure ? reject(failure) : resolve()));
  });
  done.catch(() => undefined); // read by `end` or `abort`
  return {
    async write(rows) {
      if (failure) throw failure;
      let text = '';
      for (const r of rows) text += r.map(copyField).join(',') + '\n';
      if (!stream.write(text)) {
        await new Promise<void>((resolve) => {
          const go = () => (stream.off('drain', go), stream.off('close', go), resolve());
          stream.on('drain', go).on('close', go);
        });
      }
      if (failure) throw failure;
    },
    async end() {
      stream.end();
      await done;
    },
    async abort() {
      if (!stream.destroyed) stream.destroy(new Error('import abandoned'));
      await done.catch(() => undefined);
    },
  };
}

/**
 * Refreshes the planner's statistics of a table after a bulk load, and its visibility map.
 * PostgreSQL: until autovacuum analyzes a freshly filled table, the planner may sort every contact
 * of an account for each list page (118 ms instead of 0.2 ms per query, measured); until it is
 * vacuumed, counting an account's 100,000 live contacts (every paged list's `meta.total`) reads
 * the table instead of the index alone (15 ms instead of 5.6 ms, measured). Must run outside a
 * transaction. SQLite's planner needs nothing here.
 */
export async function refreshAfterBulkLoad(db: Kysely<any>, table: string): Promise<void> {
  if (engineOf(db) === 'postgres') await sql`vacuum (analyze) ${sql.table(table)}`.execute(db);
}

/** A JSON object as text, from name → SQL expression pairs (null values kept as JSON null). */
export function jsonObjectText(engine: Engine, pairs: ReadonlyArray<readonly [string, RawBuilder<unknown>]>): RawBuilder<string> {
  const args = sql.join(pairs.map(([name, value]) => sql`${sql.lit(name)}, ${value}`));
  return engine === 'postgres' ? sql<string>`(json_build_object(${args})::text)` : sql<string>`json_object(${args})`;
}

/**
 * The end of a queue's claim select: PostgreSQL locks the chosen rows and skips those another
 * transaction holds (`FOR UPDATE SKIP LOCKED`), so concurrent workers take disjoint batches
 * without waiting; SQLite has one writer at a time, so nothing is needed.
 */
export function lockSkippingLocked(engine: Engine): RawBuilder<unknown> {
  return engine === 'postgres' ? sql`for update skip locked` : sql``;
}

/**
 * Serialises the changes to one address of one account until the transaction ends (PostgreSQL
 * advisory lock on a hash of both; SQLite has a single writer already): two concurrent soft
 * bounces of an address count against its threshold one after the other.
 */
export async function lockAccountAddress(db: Kysely<any> | Transaction<any>, userId: number, emailKey: string): Promise<void> {
  if (engineOf(db) === 'postgres') await sql`select pg_advisory_xact_lock(9, hashtext(${`${userId} ${emailKey}`}))`.execute(db);
}

/**
 * The database's clock in epoch milliseconds (a double), the same for the whole statement: the
 * shared relay limiter reads it, so workers on machines whose clocks differ keep one timeline.
 */
export function epochMsNow(engine: Engine): RawBuilder<number> {
  return engine === 'postgres'
    ? sql<number>`(extract(epoch from statement_timestamp()) * 1000)::float8`
    : sql<number>`((julianday('now') - 2440587.5) * 86400000.0)`;
}
