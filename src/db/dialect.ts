import { PostgresAdapter, sql, type ColumnDefinitionBuilder, type Kysely, type RawBuilder, type Transaction } from 'kysely';

/** Every difference between SQLite and PostgreSQL lives in this file. */
export type Engine = 'sqlite' | 'postgres';

/** Which engine a Kysely instance (or transaction) talks to. */
export function engineOf(db: Kysely<any> | Transaction<any>): Engine {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/** Adds an auto-incrementing integer primary key `id`. */
export function withId<T extends { addColumn: (...a: any[]) => T }>(engine: Engine, table: T): T {
  return engine === 'postgres'
    ? table.addColumn('id', 'serial', (c: ColumnDefinitionBuilder) => c.primaryKey())
    : table.addColumn('id', 'integer', (c: ColumnDefinitionBuilder) => c.primaryKey().autoIncrement());
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
