import { sql, type Kysely } from 'kysely';

/**
 * A key's bound, and sign-in failures by client address (docs/security.md).
 *
 * - `api_keys.root_person_id`: the person at the start of the key's chain of makers (the person
 *   who made it, or who made the key that made it, …); null when the chain starts at the command
 *   line. Authentication bounds the key, at every request, by that person's role today (and
 *   refuses it once they are removed), reading the person with the one join it already does.
 *   Existing keys get theirs by walking the `created_by_*` columns; where a maker key was revoked
 *   already, its own maker is read from the audit log (`POST /keys/create` answered with its id).
 *   A chain that cannot be read to its start either way stays as before, on its own.
 *   No foreign key: removing the person must not clear the column (the key would then stand alone).
 * - `sign_in_failures.ip`: the client address a failure came from. Ten failures for one email from
 *   one address lock that email for that address only; failures from elsewhere only slow it.
 *   Failures written before have no address: they lock nobody, and are gone within 15 minutes.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('root_person_id', 'integer').execute();
  await fillRoots(db);

  await db.schema.alterTable('sign_in_failures').addColumn('ip', 'text').execute();
  await db.schema.createIndex('sign_in_failures_email_ip').on('sign_in_failures').columns(['email_key', 'ip', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('sign_in_failures_email_ip').execute();
  await db.schema.alterTable('sign_in_failures').dropColumn('ip').execute();
  await db.schema.alterTable('api_keys').dropColumn('root_person_id').execute();
}

type Maker = { type: string | null; id: number | null };

/** Sets `root_person_id` of every existing key from its chain of makers. */
async function fillRoots(db: Kysely<any>): Promise<void> {
  const keys = (await db.selectFrom('api_keys').select(['id', 'created_by_type', 'created_by_id']).execute()) as Array<{
    id: number;
    created_by_type: string | null;
    created_by_id: number | null;
  }>;
  if (keys.length === 0) return;
  const makers = new Map<number, Maker>();
  // Revoked keys are gone from api_keys; the audit log still says who made each of them.
  const made = (await db
    .selectFrom('audit_log')
    .select(['target', 'actor_type', 'actor_id'])
    .where('action', '=', 'POST /keys/create')
    .where('status', '=', 200)
    .orderBy('id')
    .execute()) as Array<{ target: string | null; actor_type: string; actor_id: number }>;
  for (const m of made) if (m.target && /^\d+$/.test(m.target)) makers.set(Number(m.target), { type: m.actor_type, id: m.actor_id });
  for (const k of keys) makers.set(k.id, { type: k.created_by_type, id: k.created_by_id });

  /** The person at the start of a key's chain; null for the command line, or a chain that cannot be read. */
  const rootOf = (keyId: number): number | null => {
    const seen = new Set<number>();
    let maker = makers.get(keyId);
    while (maker && maker.type === 'key' && maker.id !== null && !seen.has(maker.id)) {
      seen.add(maker.id);
      maker = makers.get(maker.id);
    }
    return maker?.type === 'user' ? maker.id : null;
  };
  for (const k of keys) {
    const root = rootOf(k.id);
    if (root !== null) await sql`update api_keys set root_person_id = ${root} where id = ${k.id}`.execute(db);
  }
}
