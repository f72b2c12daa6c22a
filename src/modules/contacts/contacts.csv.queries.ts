import { CompiledQuery, type Kysely } from 'kysely';
import { bulkRows, bulkRowsParams, engineOf, type BulkConstant, type BulkType } from '../../db/dialect.js';
import type { ContactTable, DB } from '../../db/types.js';
import { CONTACT_COLUMNS } from '../fields/fields.reserved.js';

type Q = Kysely<DB>;

/** The contact's own text columns (the first eleven reserved fields), typed for Kysely. */
type ContactColumn = keyof ContactTable & string;
const STANDARD = CONTACT_COLUMNS as ContactColumn[];

/** The columns of each row tuple given to `contactUpserter`, in order: `email_key` after `email`. */
const ROW_COLUMNS: ContactColumn[] = [...STANDARD.slice(0, 3), 'email_key', ...STANDARD.slice(3), 'custom_field'];
/** The columns the same in every row of an import, after the row's own. */
const SHARED_COLUMNS = ['user_id', 'contact_type_id', 'created_at', 'updated_at'] as const;
const TYPES: BulkType[] = ROW_COLUMNS.map(() => 'text');

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

function upsertQuery(db: Q, rows: unknown[][], shared: BulkConstant[]) {
  return db
    .insertInto('contacts')
    .columns([...ROW_COLUMNS, ...SHARED_COLUMNS])
    .expression(bulkRows(engineOf(db), TYPES, rows, shared))
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
 * A writer for one import into a contact type: each call builds the statement that inserts the row
 * tuples (in `ROW_COLUMNS` order, emails unique within the call) or updates the live contact with
 * the same email, and returns the function that runs it. Building first lets the caller drop the
 * rows before the statement's turn comes. The SQL is compiled once per row count and reused:
 * compiling 13,000 parameters costs as much as running them.
 */
export function contactUpserter(db: Q, userId: number, contactTypeId: number, now: string): (rows: unknown[][]) => () => Promise<void> {
  const engine = engineOf(db);
  const shared: BulkConstant[] = [
    { type: 'integer', value: userId },
    { type: 'integer', value: contactTypeId },
    { type: 'text', value: now },
    { type: 'text', value: now },
  ];
  const compiled = new Map<number, string>();
  return (rows) => {
    if (rows.length === 0) return async () => undefined;
    const params = bulkRowsParams(engine, TYPES, rows, shared);
    // PostgreSQL's statement does not depend on the row count (one array per column).
    const size = engine === 'postgres' ? 0 : rows.length;
    let text = compiled.get(size);
    if (text === undefined) {
      const query = upsertQuery(db, rows, shared).compile();
      // Once per import: the reused SQL must bind exactly the parameters computed for it.
      if (JSON.stringify(query.parameters) !== JSON.stringify(params)) throw new Error('bulk upsert: parameter layout mismatch');
      text = query.sql;
      compiled.set(size, text);
    }
    const statement = CompiledQuery.raw(text, params);
    return async () => {
      await db.executeQuery(statement);
    };
  };
}
