import type { Kysely, Migration } from 'kysely';
import { seal, unseal, WEBHOOK_SECRET } from '../../util/seal.js';

/** A secret as `POST /webhooks/endpoints/create` made it before it was sealed. */
const isPlain = (secret: string) => secret.startsWith('whsec_');

/**
 * Webhook endpoints' signing secrets are kept sealed with the app secret (AES-256-GCM, util/seal.ts),
 * as two-factor secrets are: a copy of the database signs nothing without the app secret. Up seals
 * every secret still kept in plain text (`whsec_…`); down opens them again (one that does not open
 * stays as it is). Either needs the app secret when there is a secret to change, so the migration is
 * made with it (`migrateToLatest`).
 */
export function sealWebhookSecrets(appSecret: string | undefined): Migration {
  const rewrite = async (db: Kysely<any>, wanted: (secret: string) => boolean, change: (secret: string, key: string) => string | null) => {
    const rows: Array<{ id: number; secret: string }> = await db.selectFrom('webhook_endpoints').select(['id', 'secret']).execute();
    for (const row of rows.filter((r) => wanted(r.secret))) {
      if (appSecret === undefined) throw new Error('sealing or opening the webhook secrets needs the app secret (APP_SECRET)');
      const next = change(row.secret, appSecret);
      if (next !== null) await db.updateTable('webhook_endpoints').set({ secret: next }).where('id', '=', row.id).execute();
    }
  };
  return {
    up: (db) => rewrite(db, isPlain, (secret, key) => seal(key, WEBHOOK_SECRET, secret)),
    down: (db) =>
      rewrite(
        db,
        (secret) => !isPlain(secret),
        (secret, key) => unseal(key, WEBHOOK_SECRET, secret),
      ),
  };
}
