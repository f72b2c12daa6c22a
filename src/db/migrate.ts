import { Migrator, type Migration, type MigrationProvider } from 'kysely';
import type { Db } from './index.js';
import * as m001 from './migrations/001_foundation.js';
import * as m002 from './migrations/002_senders_notifications.js';
import * as m003 from './migrations/003_unsubscribes.js';
import * as m004 from './migrations/004_segments.js';
import * as m005 from './migrations/005_contact_parent_checks.js';
import * as m006 from './migrations/006_accounts_notify.js';
import * as m007 from './migrations/007_contact_foreign_keys.js';
import * as m008 from './migrations/008_list_totals.js';
import * as m009 from './migrations/009_delivery.js';
import * as m010 from './migrations/010_automations.js';
import * as m011 from './migrations/011_delivery_counters.js';
import * as m012 from './migrations/012_relays.js';
import * as m013 from './migrations/013_bounces.js';
import * as m014 from './migrations/014_clicks.js';
import * as m015 from './migrations/015_webhooks.js';
import * as m016 from './migrations/016_signup_forms.js';
import * as m017 from './migrations/017_erasure.js';
import * as m018 from './migrations/018_console_indexes.js';
import * as m019 from './migrations/019_idempotency.js';
import * as m020 from './migrations/020_designs.js';
import * as m021 from './migrations/021_signup_log.js';
import * as m022 from './migrations/022_suppressions.js';
import * as m023 from './migrations/023_people_engagement.js';
import * as m024 from './migrations/024_machine_engagement.js';
import * as m025 from './migrations/025_engagement_sunset.js';
import * as m026 from './migrations/026_keys_audit.js';
import * as m027 from './migrations/027_people.js';
import * as m028 from './migrations/028_ab_tests.js';
import * as m029 from './migrations/029_access_chains.js';
import { sealWebhookSecrets } from './migrations/030_sealed_webhook_secrets.js';
import * as m031 from './migrations/031_transactional_templates.js';
import * as m032 from './migrations/032_sending_domains.js';
import * as m033 from './migrations/033_media.js';

/**
 * Every migration, in order. A new migration is one import and one line here. The app secret is
 * for those that seal what they keep (030); a database with nothing to seal needs none.
 */
const migrationsWith = (appSecret?: string): Record<string, Migration> => ({
  '001_foundation': m001,
  '002_senders_notifications': m002,
  '003_unsubscribes': m003,
  '004_segments': m004,
  '005_contact_parent_checks': m005,
  '006_accounts_notify': m006,
  '007_contact_foreign_keys': m007,
  '008_list_totals': m008,
  '009_delivery': m009,
  '010_automations': m010,
  '011_delivery_counters': m011,
  '012_relays': m012,
  '013_bounces': m013,
  '014_clicks': m014,
  '015_webhooks': m015,
  '016_signup_forms': m016,
  '017_erasure': m017,
  '018_console_indexes': m018,
  '019_idempotency': m019,
  '020_designs': m020,
  '021_signup_log': m021,
  '022_suppressions': m022,
  '023_people_engagement': m023,
  '024_machine_engagement': m024,
  '025_engagement_sunset': m025,
  '026_keys_audit': m026,
  '027_people': m027,
  '028_ab_tests': m028,
  '029_access_chains': m029,
  '030_sealed_webhook_secrets': sealWebhookSecrets(appSecret),
  '031_transactional_templates': m031,
  '032_sending_domains': m032,
  '033_media': m033,
});

const providerWith = (appSecret?: string): MigrationProvider => ({ getMigrations: async () => migrationsWith(appSecret) });

/**
 * Brings the schema to the latest version; throws on the first failing migration. `appSecret` (the
 * app's) seals what a migration starts keeping sealed; a fresh database needs none.
 */
export async function migrateToLatest(db: Db, opts: { appSecret?: string } = {}): Promise<void> {
  const migrator = new Migrator({ db, provider: providerWith(opts.appSecret) });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${String((error as Error)?.message ?? error)}`);
  }
}

/** The names of the known migrations not yet applied to this database, in order (readiness). */
export async function listPendingMigrations(db: Db): Promise<string[]> {
  const known = await new Migrator({ db, provider: providerWith() }).getMigrations();
  return known.filter((m) => !m.executedAt).map((m) => m.name);
}
