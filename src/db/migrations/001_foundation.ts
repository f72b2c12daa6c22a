import { sql, type Kysely } from 'kysely';
import { engineOf, withId } from '../dialect.js';
import { RESERVED_FIELDS } from '../../reference/fields.js';

/** Accounts, field definitions (reserved ones seeded), contact types and contacts. */
export async function up(db: Kysely<any>): Promise<void> {
  const engine = engineOf(db);

  await withId(engine, db.schema.createTable('accounts'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull().unique())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await withId(engine, db.schema.createTable('fields'))
    .addColumn('user_id', 'integer', (c) => c.references('accounts.id').onDelete('cascade'))
    .addColumn('field_name', 'text', (c) => c.notNull())
    .addColumn('field_type', 'text', (c) => c.notNull())
    .addColumn('is_reserved', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text')
    .addColumn('updated_at', 'text')
    .execute();
  await db.schema.createIndex('fields_user_name').on('fields').columns(['user_id', 'field_name']).unique().execute();
  await db
    .insertInto('fields')
    .values(
      RESERVED_FIELDS.map((f) => ({
        user_id: null,
        field_name: f.name,
        field_type: f.type,
        is_reserved: 1,
        created_at: null,
        updated_at: null,
      })),
    )
    .execute();

  await withId(engine, db.schema.createTable('contact_types'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('deleted_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('contact_types_user_name')
    .on('contact_types')
    .columns(['user_id', 'name_key'])
    .unique()
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();

  await withId(engine, db.schema.createTable('contacts'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('contact_type_id', 'integer', (c) => c.notNull().references('contact_types.id'))
    .addColumn('first_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('last_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('email_key', 'text', (c) => c.notNull())
    .addColumn('alt_email', 'text')
    .addColumn('country', 'text', (c) => c.notNull())
    .addColumn('state', 'text')
    .addColumn('city', 'text')
    .addColumn('address_line1', 'text')
    .addColumn('address_line2', 'text')
    .addColumn('state_province_region', 'text')
    .addColumn('postal_code', 'text')
    .addColumn('custom_field', 'text')
    .addColumn('deleted_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('contacts_type_email')
    .on('contacts')
    .columns(['user_id', 'contact_type_id', 'email_key'])
    .unique()
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();
  // Lists, pages and their counts read only live contacts: a partial index keeps the count cheap.
  await db.schema
    .createIndex('contacts_user_live')
    .on('contacts')
    .columns(['user_id', 'id'])
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();
  await db.schema.createIndex('contacts_type_id').on('contacts').columns(['contact_type_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['contacts', 'contact_types', 'fields', 'accounts']) await db.schema.dropTable(t).execute();
}
