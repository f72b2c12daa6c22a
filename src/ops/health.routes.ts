import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { sql } from 'kysely';
import { listPendingMigrations } from '../db/migrate.js';

/** A readiness check gives up on a database that does not answer within this time. */
const READY_DEADLINE_MS = 2000;

const Live = Type.Object({ status: Type.Literal('ok') }, { description: 'The process answers.' });

const Ready = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
    database: Type.String({ description: '`ok`, or why the database is not usable' }),
    migrations: Type.String({ description: '`ok`, `unknown` while the database does not answer, or the migrations not applied' }),
  },
  { description: 'Whether the service can serve requests: the database answers and its schema is current.' },
);

/** Runs `work`, failing after `ms` milliseconds if it has not settled by then. */
async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `GET /health/live`: 200 while the process answers (a liveness probe: restart it otherwise).
 * `GET /health/ready`: 200 when the database answers a query and every migration this code knows
 * is applied, else 503 saying which part failed (a readiness probe: send it no traffic yet).
 * Both are public and not rate-limited; the reason a database failed is logged, not returned.
 */
export async function healthRoutes(app: FastifyInstance): Promise<void> {
  const { db } = app.deps.database;

  app.get(
    '/health/live',
    { config: { public: true }, schema: { summary: 'Liveness: the process answers', response: { 200: Live } } },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/health/ready',
    {
      config: { public: true },
      schema: { summary: 'Readiness: the database answers and every migration is applied', response: { 200: Ready, 503: Ready } },
    },
    async (request, reply) => {
      let pending: string[];
      try {
        pending = await within(
          READY_DEADLINE_MS,
          sql`select 1`.execute(db).then(() => listPendingMigrations(db)),
        );
      } catch (err) {
        request.log.warn({ err }, 'readiness: the database does not answer');
        return reply.code(503).send({ status: 'unavailable', database: 'no answer', migrations: 'unknown' });
      }
      if (pending.length > 0) {
        return reply.code(503).send({ status: 'unavailable', database: 'ok', migrations: `not applied: ${pending.join(', ')}` });
      }
      return { status: 'ok', database: 'ok', migrations: 'ok' };
    },
  );
}
