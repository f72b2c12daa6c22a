import type { Kysely } from 'kysely';
import { engineOf, withId } from '../dialect.js';

/**
 * Saved designs (docs/designs.md): an account's own email designs, made in the console's editor.
 *
 * - `template_json`: the MJML document in JSON form, as text; `html_code`: the HTML compiled from
 *   it when it was saved (placeholders left in). Deleted for good: a send made with a design holds
 *   its own copy of the document, so nothing refers to this table.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(engineOf(db), db.schema.createTable('designs'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('template_json', 'text', (c) => c.notNull())
    .addColumn('html_code', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('designs_user').on('designs').columns(['user_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('designs').execute();
}
