import type { Kysely } from 'kysely';
import { engineOf, withId } from '../dialect.js';

/**
 * Outgoing webhooks (docs/webhooks.md).
 *
 * - `webhook_endpoints`: an account's receivers: the URL, the event types it takes (JSON array of
 *   names, or `["*"]`), its signing secret (`whsec_…`), whether it is enabled, and since when every
 *   attempt to it has failed (`failing_since`, null while it answers).
 * - `webhook_events`: the outbox. One row per event, written in the transaction of its cause only
 *   when at least one enabled endpoint of the account takes its type. `event_id` is the
 *   `webhook-id` of every attempt; `body` is the exact JSON that is signed and posted; `email_key`
 *   is the address the event is about (erasure finds the events of an address by it).
 * - `webhook_deliveries`: one row per event and endpoint, a queue row like a mail message's:
 *   `pending` → `sending` (leased by `lease_owner` until `next_attempt_at`) → `delivered` or
 *   `failed`; `attempts` counts the tries.
 * - `webhook_attempts`: the deliveries log, one row per attempt.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const engine = engineOf(db);
  await withId(engine, db.schema.createTable('webhook_endpoints'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('failing_since', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_endpoints_user').on('webhook_endpoints').column('user_id').execute();

  await withId(engine, db.schema.createTable('webhook_events'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('event_id', 'text', (c) => c.notNull().unique())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('email_key', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_events_address').on('webhook_events').columns(['user_id', 'email_key']).execute();

  await withId(engine, db.schema.createTable('webhook_deliveries'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('event_id', 'integer', (c) => c.notNull().references('webhook_events.id').onDelete('cascade'))
    .addColumn('endpoint_id', 'integer', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('webhook_deliveries_event_endpoint', ['event_id', 'endpoint_id'])
    .execute();
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['state', 'next_attempt_at']).execute();
  await db.schema.createIndex('webhook_deliveries_endpoint').on('webhook_deliveries').columns(['endpoint_id', 'state']).execute();

  await withId(engine, db.schema.createTable('webhook_attempts'))
    .addColumn('delivery_id', 'integer', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('endpoint_id', 'integer', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('next_attempt_at', 'text')
    .execute();
  await db.schema.createIndex('webhook_attempts_endpoint').on('webhook_attempts').columns(['endpoint_id', 'id']).execute();
  await db.schema.createIndex('webhook_attempts_delivery').on('webhook_attempts').column('delivery_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_attempts').execute();
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.dropTable('webhook_events').execute();
  await db.schema.dropTable('webhook_endpoints').execute();
}
