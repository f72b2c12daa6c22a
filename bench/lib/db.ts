import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { refreshAfterBulkLoad } from '../../src/db/dialect.js';
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
      engine, url, database, db: database.db,
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
    engine, url, database, db: database.db,
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

/**
 * Inserts `n` contacts for `userId` straight through Kysely, in batches inside one transaction
 * (about 1 s per 100,000 on SQLite, 2.5 s on PostgreSQL), then has PostgreSQL vacuum and analyze the table.
 * Spread over `types` new contact types, every third one with custom values, countries from a
 * handful of real ids. Far faster than the HTTP path.
 */
export async function seedContacts(db: Db, userId: number, n: number, opts: { types?: number; batch?: number } = {}): Promise<SeededContacts> {
  const now = isoMicros();
  const typeIds: number[] = [];
  for (let t = 0; t < (opts.types ?? 5); t++) {
    const row = await db
      .insertInto('contact_types')
      .values({ user_id: userId, name: `Bench type ${t + 1}`, name_key: `bench type ${t + 1}`, created_at: now, updated_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    typeIds.push(row.id);
  }
  const countries = ['101', '231', '82', '75', '14', '39'];
  const batch = opts.batch ?? 1000; // 1000 rows × 18 columns stays under both engines' parameter limits
  let firstId = 0;
  let lastId = 0;
  await db.transaction().execute(async (trx) => {
    for (let start = 0; start < n; start += batch) {
      const rows = [];
      for (let i = start; i < Math.min(n, start + batch); i++) {
        const email = `contact${i}@bench.example.com`;
        rows.push({
          user_id: userId,
          contact_type_id: typeIds[i % typeIds.length],
          first_name: `First${i}`,
          last_name: `Last${i}`,
          email,
          email_key: email,
          alt_email: null,
          country: countries[i % countries.length],
          state: 'State',
          city: `City ${i % 100}`,
          address_line1: `${i} Bench Street`,
          address_line2: null,
          state_province_region: null,
          postal_code: String(10000 + (i % 90000)),
          custom_field: i % 3 === 0 ? JSON.stringify({ company_name: `Company ${i % 50}`, age: String(20 + (i % 50)) }) : null,
          deleted_at: null,
          created_at: now,
          updated_at: now,
        });
      }
      const ids = await trx.insertInto('contacts').values(rows).returning('id').execute();
      if (!firstId) firstId = ids[0].id;
      lastId = ids[ids.length - 1].id;
    }
  });
  // PostgreSQL: autovacuum would gather statistics and set the visibility map within a minute or
  // so, as an import does at once (refreshAfterBulkLoad); without statistics the planner sorts all of
  // an account's contacts for every list page, without the map the page's count reads the table.
  // Measure the steady state. (SQLite has no statistics unless ANALYZE is run, as in production.)
  await refreshAfterBulkLoad(db, 'contacts');
  return { typeIds, firstId, lastId };
}
