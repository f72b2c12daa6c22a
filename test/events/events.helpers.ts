import type { Database } from '../../src/db/index.js';
import { isoMicros } from '../../src/util/time.js';

/** An outgoing event as stored in the outbox, its body parsed. */
export interface StoredEvent {
  id: number;
  userId: number;
  type: string;
  emailKey: string | null;
  body: { type: string; timestamp: string; data: Record<string, any> };
}

/**
 * Adds a webhook endpoint to an account directly in the database (the endpoints API is not what
 * these tests are about): taking `events` (default every event), enabled unless said otherwise.
 * Returns its id.
 */
export async function addEndpoint(database: Database, userId: number, opts: { events?: string[]; enabled?: 0 | 1 } = {}): Promise<number> {
  const at = isoMicros(new Date());
  const row = await database.db
    .insertInto('webhook_endpoints')
    .values({
      user_id: userId,
      url: 'https://hooks.example.test/campaign',
      events: JSON.stringify(opts.events ?? ['*']),
      secret: 'whsec_x',
      enabled: opts.enabled ?? 1,
      created_at: at,
      updated_at: at,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

/** Changes an endpoint's event list or enabled flag. */
export async function changeEndpoint(database: Database, id: number, change: { events?: string[]; enabled?: 0 | 1 }): Promise<void> {
  await database.db
    .updateTable('webhook_endpoints')
    .set({
      ...(change.events ? { events: JSON.stringify(change.events) } : {}),
      ...(change.enabled !== undefined ? { enabled: change.enabled } : {}),
    })
    .where('id', '=', id)
    .execute();
}

/** The outbox events written after event row `afterId` (all when 0), oldest first; of one type when given. */
export async function eventsSince(database: Database, afterId: number, type?: string): Promise<StoredEvent[]> {
  const rows = await database.db
    .selectFrom('webhook_events')
    .selectAll()
    .where('id', '>', afterId)
    .$if(type !== undefined, (q) => q.where('type', '=', type!))
    .orderBy('id')
    .execute();
  return rows.map((r) => ({
    id: Number(r.id),
    userId: Number(r.user_id),
    type: r.type,
    emailKey: r.email_key,
    body: JSON.parse(r.body) as StoredEvent['body'],
  }));
}

/** The id of the newest outbox event (0 when none): tests read what their cause wrote after it. */
export async function lastEventId(database: Database): Promise<number> {
  const row = await database.db
    .selectFrom('webhook_events')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  return Number(row?.id ?? 0);
}

/** How many deliveries an endpoint has. */
export async function deliveriesOf(database: Database, endpointId: number): Promise<number> {
  const rows = await database.db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', endpointId).execute();
  return rows.length;
}
