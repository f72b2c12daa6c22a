import type { Db } from '../../db/index.js';
import type { WebhookDeliveryState } from '../../db/types.js';
import { isoMicros } from '../../util/time.js';
import type { WebhookEndpointRow } from './webhooks.schema.js';

/** The account's endpoints. */
export function selectEndpoints(db: Db, userId: number) {
  return db.selectFrom('webhook_endpoints').selectAll().where('user_id', '=', userId);
}

export function findEndpoint(db: Db, userId: number, id: number): Promise<WebhookEndpointRow | undefined> {
  return selectEndpoints(db, userId).where('id', '=', id).executeTakeFirst();
}

export async function insertEndpoint(
  db: Db,
  values: Pick<WebhookEndpointRow, 'user_id' | 'url' | 'events' | 'description' | 'secret'>,
  now: Date,
): Promise<number> {
  const at = isoMicros(now);
  const row = await db
    .insertInto('webhook_endpoints')
    .values({ ...values, created_at: at, updated_at: at })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export type EndpointChanges = Partial<Pick<WebhookEndpointRow, 'url' | 'events' | 'description' | 'secret' | 'enabled' | 'failing_since'>>;

/** Changes an endpoint of the account; returns whether it exists. */
export async function updateEndpointRow(db: Db, userId: number, id: number, changes: EndpointChanges, now: Date): Promise<boolean> {
  const r = await db
    .updateTable('webhook_endpoints')
    .set({ ...changes, updated_at: isoMicros(now) })
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Deletes an endpoint of the account with its deliveries and their log; returns whether it existed. */
export async function deleteEndpointRow(db: Db, userId: number, id: number): Promise<boolean> {
  const r = await db.deleteFrom('webhook_endpoints').where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/**
 * Gives up the unfinished deliveries of endpoints that were just disabled: they are `failed` (a
 * retry sends one again once the endpoint is enabled). The outcome of an attempt under way at
 * this moment is not recorded.
 */
export async function failPendingDeliveries(db: Db, endpointIds: number[], now: Date): Promise<void> {
  if (endpointIds.length === 0) return;
  await db
    .updateTable('webhook_deliveries')
    .set({ state: 'failed', lease_owner: null, updated_at: isoMicros(now) })
    .where('endpoint_id', 'in', endpointIds)
    .where('state', 'in', ['pending', 'sending'])
    .execute();
}

/** The deliveries log of one endpoint of the account, with each attempt's event. */
export function selectAttempts(db: Db, userId: number, endpointId: number) {
  return db
    .selectFrom('webhook_attempts as a')
    .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .where('d.user_id', '=', userId)
    .where('a.endpoint_id', '=', endpointId)
    .select([
      'a.id',
      'e.event_id',
      'e.type as event_type',
      'a.attempt',
      'a.status_code',
      'a.error',
      'a.duration_ms',
      'a.created_at',
      'a.next_attempt_at',
    ]);
}

/** The delivery of an event (by its `webhook-id`) to an endpoint of the account. */
export function findDelivery(
  db: Db,
  userId: number,
  endpointId: number,
  eventId: string,
): Promise<{ id: number; state: WebhookDeliveryState } | undefined> {
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .where('d.user_id', '=', userId)
    .where('d.endpoint_id', '=', endpointId)
    .where('e.event_id', '=', eventId)
    .select(['d.id', 'd.state'])
    .executeTakeFirst();
}

/** Makes a delivery due now, unless a worker is sending it at this moment. */
export async function makeDeliveryDue(db: Db, id: number, now: Date): Promise<void> {
  const at = isoMicros(now);
  await db
    .updateTable('webhook_deliveries')
    .set({ state: 'pending', next_attempt_at: at, lease_owner: null, updated_at: at })
    .where('id', '=', id)
    .where('state', '!=', 'sending')
    .execute();
}
