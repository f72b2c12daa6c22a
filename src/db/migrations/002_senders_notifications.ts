import { sql, type Kysely } from 'kysely';
import { engineOf, withId } from '../dialect.js';

/** Senders (verified by a mailed link) and notification recipients. */
export async function up(db: Kysely<any>): Promise<void> {
  const engine = engineOf(db);

  await withId(engine, db.schema.createTable('senders'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('from_name', 'text', (c) => c.notNull())
    .addColumn('from_email', 'text', (c) => c.notNull())
    .addColumn('reply_to_email', 'text', (c) => c.notNull())
    .addColumn('country_id', 'integer', (c) => c.notNull())
    .addColumn('state_id', 'integer')
    .addColumn('city_id', 'integer')
    .addColumn('zip_code', 'text')
    .addColumn('company_address', 'text', (c) => c.notNull())
    .addColumn('company_address2', 'text')
    .addColumn('nickname', 'text', (c) => c.notNull())
    .addColumn('is_verified', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('utr', 'text', (c) => c.notNull().unique())
    .addColumn('send_at', 'text')
    .addColumn('deleted_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('senders_user_id')
    .on('senders')
    .columns(['user_id', 'id'])
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();

  await withId(engine, db.schema.createTable('notification_recipients'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('email_address', 'text', (c) => c.notNull())
    // Lower-cased address: the key of the per-account uniqueness rule.
    .addColumn('email_key', 'text', (c) => c.notNull())
    .addColumn('email_owner', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('notification_recipients_user_email')
    .on('notification_recipients')
    .columns(['user_id', 'email_key'])
    .unique()
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['notification_recipients', 'senders']) await db.schema.dropTable(t).execute();
}
