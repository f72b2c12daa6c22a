import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Migrator, sql, type Migration } from 'kysely';
import pg from 'pg';
import { createDb, type Database } from '../../src/db/index.js';
import * as m001 from '../../src/db/migrations/001_foundation.js';
import * as m002 from '../../src/db/migrations/002_senders_notifications.js';
import * as m003 from '../../src/db/migrations/003_unsubscribes.js';
import * as m004 from '../../src/db/migrations/004_segments.js';
import * as m005 from '../../src/db/migrations/005_contact_parent_checks.js';
import * as m006 from '../../src/db/migrations/006_accounts_notify.js';
import * as m007 from '../../src/db/migrations/007_contact_foreign_keys.js';
import { ENGINE } from '../helpers.js';

const MIGRATIONS: Record<string, Migration> = {
  '001_foundation': m001,
  '002_senders_notifications': m002,
  '003_unsubscribes': m003,
  '004_segments': m004,
  '005_contact_parent_checks': m005,
  '006_accounts_notify': m006,
  '007_contact_foreign_keys': m007,
};

/** An empty database (no migration run) on the suite's engine, and how to drop it. */
async function emptyDatabase(): Promise<{ database: Database; drop: () => Promise<void> }> {
  if (ENGINE === 'sqlite') {
    const database = createDb('sqlite::memory:');
    return { database, drop: () => database.close() };
  }
  const adminUrl = process.env.DATABASE_URL!;
  const name = `t_${process.pid}_${randomBytes(4).toString('hex')}`;
  const run = async (text: string) => {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(text);
    await admin.end();
  };
  await run(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = '/' + name;
  const database = createDb(url.toString());
  return {
    database,
    drop: async () => {
      await database.close();
      await run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

const FK_VIOLATION = ENGINE === 'postgres' ? '23503' : 'SQLITE_CONSTRAINT_FOREIGNKEY';

describe('migration 007: contacts get declarative foreign keys', () => {
  let database: Database;
  let drop: () => Promise<void>;
  let migrator: Migrator;
  const q = <R>(text: ReturnType<typeof sql<R>>) => text.execute(database.db).then((r) => r.rows);

  before(async () => {
    ({ database, drop } = await emptyDatabase());
    migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => MIGRATIONS } });
    const to006 = await migrator.migrateTo('006_accounts_notify');
    assert.equal(to006.error, undefined);
  });
  after(() => drop());

  /** The live contacts' ids and emails, in id order. */
  const contacts = async () =>
    (await q(sql<{ id: number; email: string }>`select id, email from contacts order by id`)).map((r) => `${r.id}:${r.email}`);
  /** The names of the indexes on contacts (SQLite keeps them in the schema; PostgreSQL in pg_indexes). */
  const indexes = async () =>
    ENGINE === 'sqlite'
      ? (
          await q(
            sql<{
              name: string;
            }>`select name from sqlite_master where type = 'index' and tbl_name = 'contacts' and sql is not null order by name`,
          )
        ).map((r) => r.name)
      : (
          await q(
            sql<{
              name: string;
            }>`select indexname as name from pg_indexes where tablename = 'contacts' and indexname <> 'contacts_pkey' order by indexname`,
          )
        ).map((r) => r.name);

  it('keeps the rows, their ids and the indexes, and hands out no id twice', async () => {
    const now = '2026-01-01T00:00:00.000000Z';
    await sql`insert into accounts (name, public_key, secret_hash, created_at, updated_at) values ('A', 'pk_a', 'h', ${now}, ${now}), ('B', 'pk_b', 'h', ${now}, ${now})`.execute(
      database.db,
    );
    await sql`insert into contact_types (user_id, name, name_key, created_at, updated_at) values (1, 'T', 't', ${now}, ${now}), (2, 'U', 'u', ${now}, ${now})`.execute(
      database.db,
    );
    for (const [user, type, email] of [
      [1, 1, 'a@example.com'],
      [1, 1, 'b@example.com'],
      [2, 2, 'c@example.com'],
    ] as const) {
      await sql`insert into contacts (user_id, contact_type_id, email, email_key, country, custom_field, created_at, updated_at)
                values (${user}, ${type}, ${email}, ${email}, '101', '{"age":"3"}', ${now}, ${now})`.execute(database.db);
    }
    await sql`delete from contacts where email = 'c@example.com'`.execute(database.db); // the highest id, gone for good
    const rowsBefore = await contacts();
    const indexesBefore = await indexes();

    const up = await migrator.migrateTo('007_contact_foreign_keys');
    assert.equal(up.error, undefined);
    assert.deepEqual(await contacts(), rowsBefore);
    assert.deepEqual(await indexes(), indexesBefore);
    const [row] = await q(sql<{ custom_field: string; country: string }>`select custom_field, country from contacts where id = 1`);
    assert.deepEqual(row, { custom_field: '{"age":"3"}', country: '101' });

    // The contact type of another account is refused now, on both engines.
    await assert.rejects(
      sql`insert into contacts (user_id, contact_type_id, email, email_key, country, created_at, updated_at) values (1, 2, 'x@example.com', 'x@example.com', '101', ${now}, ${now})`.execute(
        database.db,
      ),
      { code: FK_VIOLATION },
    );
    const [created] = await q(
      sql<{
        id: number;
      }>`insert into contacts (user_id, contact_type_id, email, email_key, country, created_at, updated_at) values (1, 1, 'd@example.com', 'd@example.com', '101', ${now}, ${now}) returning id`,
    );
    assert.ok(created.id > 3, `id ${created.id}: the id of the contact deleted before the migration is not reused`);
    await sql`delete from contacts where id = ${created.id}`.execute(database.db);
  });

  it('goes back to the previous schema and forward again', async () => {
    const rows = await contacts();
    const down = await migrator.migrateTo('006_accounts_notify');
    assert.equal(down.error, undefined);
    assert.deepEqual(await contacts(), rows);
    const up = await migrator.migrateTo('007_contact_foreign_keys');
    assert.equal(up.error, undefined);
    assert.deepEqual(await contacts(), rows);
    await assert.rejects(sql`delete from contact_types where id = 1`.execute(database.db), { code: FK_VIOLATION });
  });
});
