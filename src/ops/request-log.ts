import type { FastifyInstance } from 'fastify';

/**
 * One log line per request, written when the response has gone: method, route pattern (not the
 * raw URL, which may carry ids and tokens), status, response time in milliseconds and the
 * account id when the request was authenticated. Headers are never logged, so neither API key
 * can reach the log. Fastify's own request logging is turned off in buildApp
 * (`disableRequestLogging`); this replaces its two lines per request with one.
 */
export function registerRequestLog(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        method: request.method,
        route: request.routeOptions.url ?? null,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 100) / 100,
        ...(request.userId ? { account: request.userId } : {}),
      },
      'request',
    );
  });
}
