import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { mayChange } from '../../http/principal.js';
import { insertAuditEntry } from './audit.queries.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route writes its own audit entry (an event such as `session.sign_out`), so the request's is not written. */
    ownAudit?: boolean;
  }
}

/** Fields that name the record a request acts on, in the order they are looked for. */
const TARGET_FIELDS = [
  'utr',
  'id',
  'contact_id',
  'segment_id',
  'segment_recipient_id',
  'sender_id',
  'groupId',
  'unsubscribe_groups_id',
  'contact_type_id',
  'endpoint_id',
  'strIds',
];

/** A scalar as text, or several (a bulk delete's ids) comma-separated; null for anything else. */
function asText(value: unknown): string | null {
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string' || typeof v === 'number'))
    return value.join(',');
  return null;
}

/**
 * The record a request acted on: the id (or utr) a create answered with, else the first
 * identifying field of the query or the body. Never anything else of the body.
 */
function targetOf(request: FastifyRequest, payload: unknown): string | null {
  if (typeof payload === 'string' && payload.length < 4096 && payload.startsWith('{"status":"success"')) {
    try {
      const body = JSON.parse(payload) as { id?: unknown; message?: { id?: unknown; utr?: unknown } };
      const made = asText(body.id) ?? asText(body.message?.utr) ?? asText(body.message?.id);
      if (made !== null) return made;
    } catch {
      // Not JSON after all: the request's own fields decide.
    }
  }
  for (const source of [request.query, request.body]) {
    if (!source || typeof source !== 'object') continue;
    for (const name of TARGET_FIELDS) {
      const value = asText((source as Record<string, unknown>)[name]);
      if (value !== null) return value;
    }
  }
  return null;
}

/**
 * Writes one audit entry for every authenticated request that may change something (any method but
 * GET and HEAD, and the GET routes declared actions: `config.action`), whatever its answer (a
 * refused one too): who (the key or person), `<METHOD> <path>` (the route's path, never
 * its query), the record it names, the status, the client's address and user agent. Written before
 * the answer leaves, so an entry exists for every answer a client saw; a failure to write is
 * logged and the answer still goes out. No body, header value or secret is ever written.
 */
export function registerAuditLog(app: FastifyInstance): void {
  const { deps } = app;
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const principal = request.principal;
    if (!principal || !request.routeOptions.url || request.routeOptions.config.ownAudit || !mayChange(request)) return payload;
    try {
      await insertAuditEntry(deps.database.db, {
        userId: principal.account,
        actor: principal.actor,
        action: `${request.method} ${request.routeOptions.url}`,
        target: targetOf(request, payload),
        status: reply.statusCode,
        ip: request.ip ?? null,
        userAgent: request.headers['user-agent'] ?? null,
        at: deps.clock.now(),
      });
    } catch (err) {
      request.log.error({ err }, 'audit entry not written');
    }
    return payload;
  });
}
