import type { Kysely } from 'kysely';
import { binaryType, engineOf, withId } from '../dialect.js';

/**
 * The media library (docs/media.md): an account's uploaded images, kept in the database so that
 * every server and worker serves them.
 *
 * - `token`: the unguessable part of the image's public URL (96 random bits, hex); unique.
 * - `data`, `thumb`: the cleaned image and its thumbnail, as bytes (`bytea` / `blob`); lists never
 *   select them. `size` and `thumb_size` are their lengths (the quota sums them).
 * - `etag`: a hash of `data`, answered as the `ETag` of both URLs (with a suffix for the thumbnail).
 * - Deleted for good: a design that names an image keeps it from being deleted.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const bytes = binaryType(engineOf(db));
  await withId(engineOf(db), db.schema.createTable('media'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('token', 'text', (c) => c.notNull().unique())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('width', 'integer', (c) => c.notNull())
    .addColumn('height', 'integer', (c) => c.notNull())
    .addColumn('frames', 'integer', (c) => c.notNull())
    .addColumn('etag', 'text', (c) => c.notNull())
    .addColumn('data', bytes, (c) => c.notNull())
    .addColumn('thumb_type', 'text', (c) => c.notNull())
    .addColumn('thumb_size', 'integer', (c) => c.notNull())
    .addColumn('thumb', bytes, (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('media_user').on('media').columns(['user_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('media').execute();
}
