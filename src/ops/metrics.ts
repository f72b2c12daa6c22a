import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import { AppError } from '../http/errors.js';
import { FailedText, Media } from '../http/schemas.js';
import { hashSecret, sameHash } from '../util/secrets.js';

/** The route label of a request that matched no route: raw URLs would make a series per URL. */
const UNMATCHED = 'unmatched';

/** Request latency buckets, in seconds: from a remembered-key lookup to a large CSV import. */
const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

let processRegistry: Registry | undefined;

/**
 * The process metrics (CPU, memory, event loop lag, handles, GC) belong to the process, not to an
 * app: they are collected once into a registry of their own and merged into every scrape.
 */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

const madeOn = new WeakMap<Registry, Map<string, unknown>>();

/**
 * The metric (or group of metrics) called `name` on `registry`, made by `make` the first time it
 * is asked for and the same object after: a registry refuses a second metric of one name, and a
 * process may start and stop several workers, lanes or queues on one app. Keyed by registry, so
 * each app (each test) keeps its own counts.
 */
export function metricOnce<M>(registry: Registry, name: string, make: () => M): M {
  let made = madeOn.get(registry);
  if (!made) madeOn.set(registry, (made = new Map()));
  if (!made.has(name)) made.set(name, make());
  return made.get(name) as M;
}

/** A new, empty registry for one app (`deps.metrics`). */
export function createMetricsRegistry(): Registry {
  return new Registry();
}

/**
 * Counts every response by method, route pattern and status, and observes its latency, on the
 * app's registry; serves `GET /metrics` in Prometheus' text format (the app's metrics and the
 * process metrics). Public and not rate-limited, as exporters are; with `METRICS_TOKEN` set it
 * requires `Authorization: Bearer <token>`.
 */
export function registerMetrics(app: FastifyInstance, registry: Registry, token: string | null): void {
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from receiving a request to sending its response, by method and route pattern.',
    labelNames: ['method', 'route'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? UNMATCHED;
    requests.inc({ method: request.method, route, status_code: reply.statusCode });
    latency.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });

  // Compared as hashes: equal lengths for timingSafeEqual, and no timing hint of the token's length.
  const expected = token ? hashSecret(token) : null;
  app.get(
    '/metrics',
    {
      config: { public: true },
      schema: {
        summary: 'Metrics in the Prometheus text format (a bearer token when METRICS_TOKEN is set)',
        response: {
          200: Media('text/plain', 'Prometheus text exposition format'),
          401: FailedText,
        },
      },
      onRequest: async (request) => {
        if (!expected) return;
        const given = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1]?.trim() ?? '';
        if (!sameHash(hashSecret(given), expected)) {
          throw new AppError(401, 'A valid metrics token is required: send Authorization: Bearer <METRICS_TOKEN>.', {
            'www-authenticate': 'Bearer realm="metrics"',
          });
        }
      },
    },
    async (_request, reply) => {
      const merged = Registry.merge([registry, processMetrics()]);
      reply.type(merged.contentType);
      return merged.metrics();
    },
  );
}
