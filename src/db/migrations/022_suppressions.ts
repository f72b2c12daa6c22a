import type { Kysely } from 'kysely';

/**
 * The account's suppression list was named `bounced_addresses`, though it also holds complaints
 * (reason `complaint`) and soft-bounce thresholds (reason `soft_bounces`): it becomes
 * `suppressions` (docs/bounces.md, "Suppression"). A rename keeps its rows, ids, the unique
 * (user_id, email_key) constraint and the foreign key to `accounts` on both engines.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('bounced_addresses').renameTo('suppressions').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('suppressions').renameTo('bounced_addresses').execute();
}
