import type pg from 'pg';
import { CompiledQuery, sql, type Kysely, type RawBuilder } from 'kysely';
import { bulkRows, bulkRowsParams, copyRows, type BulkConstant, type RowCopy } from '../../db/dialect.js';
import type { ContactTable, DB } from '../../db/types.js';
import { CONTACT_COLUMNS } from '../../reference/fields.js';

type Q = Kysely<DB>;

/** The contact's own text columns (the first eleven reserved fields), typed for Kysely. */
type ContactColumn = keyof ContactTable & string;
const STANDARD = CONTACT_COLUMNS as ContactColumn[];

/** The columns of each row tuple given to `contactSink`, in order: `email_key` after `email`. */
const ROW_COLUMNS: ContactColumn[] = [...STANDARD.slice(0, 3), 'email_key', ...STANDARD.slice(3), 'custom_field'];
/** The columns the same in every row of an import, after the row's own. */
const SHARED_COLUMNS = ['user_id', 'contact_type_id', 'created_at', 'updated_at'] as const;

/** The existing row's values an update keeps where the file leaves a cell empty. */
export type ExistingContact = Record<string, string | null> & { email_key: string; custom_field: string | null };
const EXISTING_COLUMNS: ContactColumn[] = [...STANDARD, 'email_key', 'custom_field'];

/** The live contacts of the contact type whose lower-cased email is among `keys`. */
export function contactsByEmailKeys(db: Q, userId: number, contactTypeId: number, keys: string[]): Promise<ExistingContact[]> {
  return db
    .selectFrom('contacts')
    .select([...EXISTING_COLUMNS])
    .where('user_id', '=', userId)
    .where('contact_type_id', '=', contactTypeId)
    .where('deleted_at', 'is', null)
    .where('email_key', 'in', keys)
    .execute() as Promise<unknown[]> as Promise<ExistingContact[]>; // the columns above, typed wider by Kysely
}

/** Whether the contact type has any live contact. */
export async function hasContacts(db: Q, userId: number, contactTypeId: number): Promise<boolean> {
  const row = await db
    .selectFrom('contacts')
    .select('id')
    .where('user_id', '=', userId)
    .where('contact_type_id', '=', contactTypeId)
    .where('deleted_at', 'is', null)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** The import's staging table on PostgreSQL: the row tuples, loaded by COPY, dropped at commit. */
const STAGING = 'import_contacts';

/** `INSERT … <source> ON CONFLICT` on the live contact with the same email: the file's values win. */
function upsertQuery(db: Q, source: RawBuilder<unknown>) {
  return db
    .insertInto('contacts')
    .columns([...ROW_COLUMNS, ...SHARED_COLUMNS])
    .expression(source)
    .onConflict((oc) =>
      oc
        // The partial unique index contacts_type_email: one live contact per email and contact type.
        .columns(['user_id', 'contact_type_id', 'email_key'])
        .where('deleted_at', 'is', null)
        .doUpdateSet((eb) => ({
          first_name: eb.ref('excluded.first_name'),
          last_name: eb.ref('excluded.last_name'),
          email: eb.ref('excluded.email'),
          alt_email: eb.ref('excluded.alt_email'),
          country: eb.ref('excluded.country'),
          state: eb.ref('excluded.state'),
          city: eb.ref('excluded.city'),
          address_line1: eb.ref('excluded.address_line1'),
          address_line2: eb.ref('excluded.address_line2'),
          state_province_region: eb.ref('excluded.state_province_region'),
          postal_code: eb.ref('excluded.postal_code'),
          custom_field: eb.ref('excluded.custom_field'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
    );
}

/**
 * Where an import's rows go, inside its transaction: row tuples in `ROW_COLUMNS` order, each email
 * at most once between two `flush`es. `flush` makes every row written so far visible to the
 * transaction's queries; `abort` leaves the connection ready to roll back after a failure.
 */
export interface ContactSink {
  write(rows: (string | null)[][]): Promise<void>;
  flush(): Promise<void>;
  abort(): Promise<void>;
}

/**
 * The sink of one import into a contact type. SQLite: each `write` is one upsert statement
 * (`bulkRows`), compiled once per row count and reused (compiling 13,000 parameters costs as much
 * as running them). PostgreSQL (`client` given): rows stream by `COPY` into a temporary table, and
 * `flush` moves them into contacts with one upsert: one statement for a whole first import.
 */
export function contactSink(db: Q, client: pg.PoolClient | null, userId: number, contactTypeId: number, now: string): ContactSink {
  const shared: BulkConstant[] = [userId, contactTypeId, now, now];
  if (!client) {
    const compiled = new Map<number, string>();
    return {
      async write(rows) {
        if (rows.length === 0) return;
        let text = compiled.get(rows.length);
        if (text === undefined) compiled.set(rows.length, (text = upsertQuery(db, bulkRows(rows, shared)).compile().sql));
        await db.executeQuery(CompiledQuery.raw(text, bulkRowsParams(rows)));
      },
      flush: async () => undefined,
      abort: async () => undefined,
    };
  }
  let staged = false;
  let copy: RowCopy | null = null;
  const columns = sql.join(ROW_COLUMNS.map((c) => sql.ref(c)));
  // A temporary table is read in the order it was written: contacts get their ids in file order.
  const fromStaging = sql`select ${columns}, ${userId}::int4, ${contactTypeId}::int4, ${now}::text, ${now}::text from ${sql.table(STAGING)}`;
  return {
    async write(rows) {
      if (rows.length === 0) return;
      if (!staged) {
        const defs = sql.join(ROW_COLUMNS.map((c) => sql`${sql.ref(c)} text`));
        await sql`create temporary table ${sql.table(STAGING)} (${defs}) on commit drop`.execute(db);
        staged = true;
      }
      copy ??= copyRows(client, STAGING, ROW_COLUMNS);
      await copy.write(rows);
    },
    async flush() {
      if (!copy) return;
      const done = copy;
      copy = null;
      await done.end();
      await upsertQuery(db, fromStaging).execute();
      await sql`truncate ${sql.table(STAGING)}`.execute(db);
    },
    async abort() {
      await copy?.abort();
      copy = null;
    },
  };
}
