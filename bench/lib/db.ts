import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { sql, type RawBuilder } from 'kysely';
import { engineOf, refreshAfterBulkLoad } from '../../src/db/dialect.js';
import { createDb, type Database, type Db } from '../../src/db/index.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createAccount, type IssuedKeys } from '../../src/modules/accounts/accounts.service.js';
import { isoMicros } from '../../src/util/time.js';

export type Engine = 'sqlite' | 'postgres';

/** The PostgreSQL server benchmarks use when it answers (override with BENCH_PG_URL). */
export const PG_ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Whether PostgreSQL answers at `PG_ADMIN_URL` (within 3 s). */
export async function pgReachable(url = PG_ADMIN_URL): Promise<boolean> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    await c.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => undefined);
  }
}

export interface BenchDatabase {
  readonly engine: Engine;
  /** DATABASE_URL for the server process. */
  readonly url: string;
  /** This process's own connection (migrated), for seeding and checks. */
  readonly database: Database;
  readonly db: Db;
  /** Closes the connection and deletes the database (SQLite file / PostgreSQL database). Stop servers first. */
  drop(): Promise<void>;
}

/**
 * A fresh, migrated bench database: a SQLite file in a temp folder (a file, not :memory:, so the
 * server process can open it), or a new `bench_…` database on the PostgreSQL server.
 */
export async function benchDatabase(engine: Engine): Promise<BenchDatabase> {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'campaign-bench-'));
    const url = `sqlite:${join(dir, 'bench.db')}`;
    const database = createDb(url);
    await migrateToLatest(database.db);
    return {
      engine,
      url,
      database,
      db: database.db,
      drop: async () => {
        await database.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const name = `bench_${process.pid}_${randomBytes(3).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const u = new URL(PG_ADMIN_URL);
  u.pathname = '/' + name;
  const url = u.toString();
  const database = createDb(url);
  await migrateToLatest(database.db);
  return {
    engine,
    url,
    database,
    db: database.db,
    drop: async () => {
      await database.close();
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

async function adminQuery(text: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
}

/** Creates an account; returns its keys and the headers that authenticate as it. */
export async function seedAccount(db: Db, name = 'Bench account'): Promise<IssuedKeys & { headers: Record<string, string> }> {
  const keys = await createAccount(db, name);
  return { ...keys, headers: { publickey: keys.public_key, secretkey: keys.secret_key } };
}

export interface SeededContacts {
  typeIds: number[];
  /** Lowest and highest contact id created (ids are consecutive on a fresh database). */
  firstId: number;
  lastId: number;
}

/** `case <i> % n when 0 then v0 when 1 then v1 … end`: the `i`-th of `values`, cycling, in SQL. */
function cycle(i: RawBuilder<unknown>, values: Array<string | number>): RawBuilder<unknown> {
  const arms = values.map((v, k) => sql`when ${sql.lit(k)} then ${sql.lit(v)}`);
  return sql`(case ${i} % ${sql.lit(values.length)} ${sql.join(arms, sql` `)} end)`;
}

/**
 * Inserts `n` contacts for `userId`, numbered from `from` (so a second call adds others), in
 * statements of `batch` rows that each generate their rows in the database (PostgreSQL
 * `generate_series`, SQLite a recursive CTE), all in one transaction: about 1 s per 100,000 on
 * SQLite, 1.5 s on PostgreSQL, the triggers that keep the totals included. Then has PostgreSQL
 * vacuum and analyze the table. Spread over `types` new contact types (or the given `typeIds`),
 * every third contact with custom values, countries from a handful of real ids. Far faster than
 * the HTTP path.
 */
export async function seedContacts(
  db: Db,
  userId: number,
  n: number,
  opts: { types?: number; typeIds?: number[]; from?: number; batch?: number } = {},
): Promise<SeededContacts> {
  const now = isoMicros(new Date());
  const typeIds = [...(opts.typeIds ?? [])];
  for (let t = 0; !opts.typeIds && t < (opts.types ?? 5); t++) {
    const row = await db
      .insertInto('contact_types')
      .values({ user_id: userId, name: `Bench type ${t + 1}`, name_key: `bench type ${t + 1}`, created_at: now, updated_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    typeIds.push(row.id);
  }
  const countries = ['101', '231', '82', '75', '14', '39'];
  const from = opts.from ?? 0;
  const batch = opts.batch ?? 100_000;
  const postgres = engineOf(db) === 'postgres';
  const before = await db
    .selectFrom('contacts')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  await db.transaction().execute(async (trx) => {
    for (let start = from; start < from + n; start += batch) {
      const end = Math.min(from + n, start + batch) - 1;
      const i = sql.ref('g.i');
      // Row i: custom_field is the text JSON.stringify gives for the same values.
      const values = sql`
        select ${userId}, ${cycle(i, typeIds)}, 'First' || ${i}, 'Last' || ${i},
          'contact' || ${i} || '@bench.example.com', 'contact' || ${i} || '@bench.example.com', null,
          ${cycle(i, countries)}, 'State', 'City ' || (${i} % 100), ${i} || ' Bench Street', null, null,
          ${postgres ? sql`(10000 + ${i} % 90000)::text` : sql`cast(10000 + ${i} % 90000 as text)`},
          case when ${i} % 3 = 0 then '{"company_name":"Company ' || (${i} % 50) || '","age":"' || (20 + ${i} % 50) || '"}' end,
          null, ${now}, ${now}`;
      const rows = postgres
        ? sql`${values} from generate_series(${start}::int, ${end}::int) as g(i)`
        : // Literals: better-sqlite3 binds a JS number as a real, and 'First' || 1.0 is 'First1.0'.
          sql`with recursive g(i) as (select ${sql.lit(start)} union all select i + 1 from g where i < ${sql.lit(end)}) ${values} from g`;
      await sql`
        insert into contacts (user_id, contact_type_id, first_name, last_name, email, email_key, alt_email, country, state, city,
          address_line1, address_line2, state_province_region, postal_code, custom_field, deleted_at, created_at, updated_at)
        ${rows}`.execute(trx);
    }
  });
  // Ids are consecutive: one transaction, one writer.
  const ids = await db
    .selectFrom('contacts')
    .select((eb) => [eb.fn.min('id').as('lo'), eb.fn.max('id').as('hi')])
    .where('user_id', '=', userId)
    .where('id', '>', Number(before?.id ?? 0))
    .executeTakeFirstOrThrow();
  // PostgreSQL: autovacuum would gather statistics and set the visibility map within a minute or
  // so, as an import does at once (refreshAfterBulkLoad); without statistics the planner sorts all of
  // an account's contacts for every list page. Measure the steady state. (SQLite has no statistics
  // unless ANALYZE is run, as in production.)
  await refreshAfterBulkLoad(db, 'contacts');
  return { typeIds, firstId: Number(ids.lo), lastId: Number(ids.hi) };
}
