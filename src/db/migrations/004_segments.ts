import { sql, type CreateTableBuilder, type Kysely } from 'kysely';
import { engineOf, withId } from '../dialect.js';

/**
 * Segments (a contact type plus field conditions) and their membership.
 *
 * `segment_recipients` holds both kinds of member: contacts that match the segment's conditions
 * (`contact_id` set, names read from the contact) and recipients added by hand (`contact_id`
 * null, names stored here). One table gives both one id space for `segment_recipient_id`.
 * It has no foreign keys on purpose: the membership is rewritten in bulk (INSERT … SELECT of up
 * to every contact of a type), and PostgreSQL checks a foreign key with one trigger call per
 * row; the segments code removes a segment's rows itself.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const engine = engineOf(db);

  await withId(engine, db.schema.createTable('segments'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('contact_type_id', 'integer', (c) => c.notNull())
    .addColumn('segment_name', 'text', (c) => c.notNull())
    .addColumn('select_field', 'text', (c) => c.notNull())
    .addColumn('select_operator', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('query_type', 'text')
    .addColumn('deleted_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('segments_user_id').on('segments').columns(['user_id', 'id']).execute();

  // SQLite: `id` is the rowid (free) and (segment_id, id) an index. PostgreSQL: the primary key is
  // (segment_id, id) itself, one index fewer to maintain on bulk inserts (ids still come from the
  // sequence, so they stay unique; lookups by id also name the segment).
  const recipients: CreateTableBuilder<'segment_recipients', any> =
    engine === 'postgres'
      ? db.schema.createTable('segment_recipients').addColumn('id', 'serial', (c) => c.notNull())
      : withId(engine, db.schema.createTable('segment_recipients'));
  await recipients
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('segment_id', 'integer', (c) => c.notNull())
    .addColumn('contact_id', 'integer')
    .addColumn('first_name', 'text')
    .addColumn('last_name', 'text')
    .addColumn('email', 'text')
    .addColumn('email_key', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .$call((t) => (engine === 'postgres' ? t.addPrimaryKeyConstraint('segment_recipients_pk', ['segment_id', 'id']) : t))
    .execute();
  // Lists, counts and keyset batches of one segment.
  if (engine === 'sqlite')
    await db.schema.createIndex('segment_recipients_segment').on('segment_recipients').columns(['segment_id', 'id']).execute();
  // A contact is in a segment at most once; also finds a contact's segments (scoped sync).
  await db.schema
    .createIndex('segment_recipients_contact')
    .on('segment_recipients')
    .columns(['contact_id', 'segment_id'])
    .unique()
    .execute();
  // A hand-added address is in a segment at most once (matched rows have no email_key).
  await db.schema
    .createIndex('segment_recipients_email')
    .on('segment_recipients')
    .columns(['segment_id', 'email_key'])
    .unique()
    .where(sql.ref('email_key'), 'is not', null)
    .execute();

  // Matched contacts removed by hand from a segment: kept out until the segment is edited.
  await db.schema
    .createTable('segment_exclusions')
    .addColumn('segment_id', 'integer', (c) => c.notNull())
    .addColumn('contact_id', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('segment_exclusions_pk', ['segment_id', 'contact_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['segment_exclusions', 'segment_recipients', 'segments']) await db.schema.dropTable(t).execute();
}
