import { sql, type Kysely } from 'kysely';
import { engineOf, withId } from '../dialect.js';

/**
 * Transactional templates (docs/transactional.md): SendGrid's dynamic templates, under `/v3/templates`.
 *
 * - `transactional_templates`: a template of the account, known outside by `public_id`
 *   (`d-` and 32 hexadecimal digits, as SendGrid's ids are).
 * - `transactional_template_versions`: its versions, known by `public_id` (a UUID): a subject and
 *   an HTML and a text part, each a Handlebars template; `active` (0/1) marks the one a send uses,
 *   at most one per template (a partial unique index says so, whatever the code does).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const engine = engineOf(db);
  await withId(engine, db.schema.createTable('transactional_templates'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('public_id', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('transactional_templates_user').on('transactional_templates').columns(['user_id', 'id']).execute();

  await withId(engine, db.schema.createTable('transactional_template_versions'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('template_id', 'integer', (c) => c.notNull().references('transactional_templates.id').onDelete('cascade'))
    .addColumn('public_id', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('html_content', 'text', (c) => c.notNull())
    .addColumn('plain_content', 'text', (c) => c.notNull())
    .addColumn('generate_plain_content', 'integer', (c) => c.notNull())
    .addColumn('editor', 'text', (c) => c.notNull())
    .addColumn('test_data', 'text')
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('transactional_template_versions_template')
    .on('transactional_template_versions')
    .columns(['template_id', 'id'])
    .execute();
  await db.schema
    .createIndex('transactional_template_versions_one_active')
    .on('transactional_template_versions')
    .column('template_id')
    .unique()
    .where(sql.ref('active'), '=', 1)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('transactional_template_versions').execute();
  await db.schema.dropTable('transactional_templates').execute();
}
