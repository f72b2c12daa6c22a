import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/index.js';
import { engineOf } from '../db/dialect.js';
import { isoMicros } from '../util/time.js';

/** Every event type an endpoint can take (or `*`: all of them). */
export const EVENT_TYPES = [
  'message.delivered',
  'message.bounced',
  'message.opened',
  'message.clicked',
  'message.complained',
  'contact.unsubscribed',
  'contact.subscribed',
  'single_send.completed',
  'single_send.ab_winner',
  'contacts.imported',
  'sender.verified',
  'automation.live',
  'automation.paused',
  'sending_domain.failed',
  'sending_domain.verified',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The PostgreSQL channel that wakes idle webhook workers when an event is written. */
export const WEBHOOK_CHANNEL = 'campaign_webhooks';

/** One event of one account, as its cause produces it. */
export interface OutgoingEvent {
  userId: number;
  type: EventType;
  /** The event's `data` object. */
  data: Record<string, unknown>;
  /** The address the event is about, if any (erasure finds the event by it). */
  email?: string | null;
}

/** A fresh `webhook-id`: `evt_` and 128 random bits. */
function newEventId(): string {
  return `evt_${randomBytes(16).toString('base64url')}`;
}

/** Whether an endpoint's stored event list (JSON array) takes `type`. */
export function takesEvent(events: string, type: string): boolean {
  try {
    const list = JSON.parse(events) as unknown;
    return Array.isArray(list) && (list.includes('*') || list.includes(type));
  } catch {
    return false;
  }
}

/** Rows per insert: six values each stays well under both engines' limit of bound parameters. */
const ROWS_PER_INSERT = 500;

function chunks<T>(rows: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) out.push(rows.slice(i, i + ROWS_PER_INSERT));
  return out;
}

/**
 * Writes events into the outbox in `trx`, the transaction of what caused them, so an event exists
 * exactly when its cause is committed. An event is written only for an account with an enabled
 * endpoint that takes its type, with one delivery row per such endpoint, due at `now`; an account
 * without endpoints costs one read per call. On PostgreSQL it wakes idle webhook workers at the
 * commit. Returns how many events were written.
 */
export async function emitEvents(trx: Db, now: Date, events: readonly OutgoingEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  const userIds = [...new Set(events.map((e) => e.userId))];
  const endpoints = await trx
    .selectFrom('webhook_endpoints')
    .select(['id', 'user_id', 'events'])
    .where('user_id', 'in', userIds)
    .where('enabled', '=', 1)
    .orderBy('id')
    .execute();
  if (endpoints.length === 0) return 0;
  const at = isoMicros(now);
  const timestamp = now.toISOString();
  const wanted = events
    .map((e) => ({ e, to: endpoints.filter((p) => p.user_id === e.userId && takesEvent(p.events, e.type)).map((p) => p.id) }))
    .filter((w) => w.to.length > 0)
    .map((w) => ({ ...w, eventId: newEventId() }));
  if (wanted.length === 0) return 0;
  const idOf = new Map<string, number>();
  for (const part of chunks(wanted)) {
    const rows = await trx
      .insertInto('webhook_events')
      .values(
        part.map((w) => ({
          user_id: w.e.userId,
          event_id: w.eventId,
          type: w.e.type,
          body: JSON.stringify({ type: w.e.type, timestamp, data: w.e.data }),
          email_key: w.e.email ? w.e.email.toLowerCase() : null,
          created_at: at,
        })),
      )
      .returning(['id', 'event_id'])
      .execute();
    for (const r of rows) idOf.set(r.event_id, Number(r.id));
  }
  const deliveries = wanted.flatMap((w) =>
    w.to.map((endpointId) => ({
      user_id: w.e.userId,
      event_id: idOf.get(w.eventId)!,
      endpoint_id: endpointId,
      next_attempt_at: at,
      created_at: at,
      updated_at: at,
    })),
  );
  for (const part of chunks(deliveries)) await trx.insertInto('webhook_deliveries').values(part).execute();
  await wakeWebhookWorkers(trx);
  return wanted.length;
}

/**
 * Tells idle webhook workers that a delivery is due. On PostgreSQL the notification goes out at
 * the commit of `db`'s transaction (and not at all on rollback); SQLite's one worker polls.
 */
export async function wakeWebhookWorkers(db: Db): Promise<void> {
  if (engineOf(db) === 'postgres') await sql`select pg_notify(${WEBHOOK_CHANNEL}, '')`.execute(db);
}
