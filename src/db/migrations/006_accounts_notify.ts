import { sql, type Kysely } from 'kysely';
import { ACCOUNTS_CHANNEL } from '../accounts-watch.js';
import { engineOf } from '../dialect.js';

/**
 * PostgreSQL: every change to `accounts` (a new account, a rotated secret, a disabled account, by
 * the API's process, the CLI or plain SQL) notifies `ACCOUNTS_CHANNEL` at commit. Servers listen
 * (`watchAccounts`) and forget the keys they verified. SQLite needs nothing: a connection reads
 * its change counters directly.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (engineOf(db) !== 'postgres') return;
  await sql`
    create function accounts_notify_change() returns trigger language plpgsql as $$
    begin
      perform pg_notify(${sql.lit(ACCOUNTS_CHANNEL)}, '');
      return null;
    end $$`.execute(db);
  await sql`create trigger accounts_notify_change after insert or update or delete or truncate on accounts for each statement execute function accounts_notify_change()`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  if (engineOf(db) !== 'postgres') return;
  await sql`drop trigger accounts_notify_change on accounts`.execute(db);
  await sql`drop function accounts_notify_change()`.execute(db);
}
