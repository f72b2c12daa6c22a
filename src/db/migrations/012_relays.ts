import type { Kysely } from 'kysely';

/**
 * The shared state of the SMTP relays (`SMTP_URL`), one row per relay name, so that every worker
 * on one database keeps one rate and one pause per relay:
 *
 * - `next_at`: the relay's next free sending slot (epoch milliseconds of the database's clock):
 *   a GCRA "theoretical arrival time", moved on by one interval per message with one conditional
 *   update;
 * - `paused_until` (epoch ms) and `pause_ms` (the length of the last pause: 0 while the relay
 *   works, then 1 s doubling to 5 min while it keeps throttling or refusing connections).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('relays')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('next_at', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('paused_until', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('pause_ms', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('relays').execute();
}
