/**
 * Indexes for the console's two reads (the additive endpoints it needs):
 * - `contacts_user_email`: `GET /contacts/search`, live contacts whose address starts with a prefix,
 *   in address order, read as a range of this index. On PostgreSQL the address is indexed in byte
 *   order (`collate "C"`), whatever the database's collation, so the prefix range is exact; SQLite
 *   compares text bytewise already.
 * - `mail_messages_user_created`: `GET /account/overview`, the account's messages of the last days.
 */
import { sql, type Kysely } from 'kysely';
import { engineOf } from '../dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  const email = engineOf(db) === 'postgres' ? sql`email_key collate "C"` : sql`email_key`;
  await sql`create index contacts_user_email on contacts (user_id, ${email}) where deleted_at is null`.execute(db);
  await db.schema.createIndex('mail_messages_user_created').on('mail_messages').columns(['user_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('mail_messages_user_created').execute();
  await db.schema.dropIndex('contacts_user_email').execute();
}
