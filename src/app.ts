import Fastify, { type FastifyInstance } from 'fastify';
import compress from '@fastify/compress';
import rateLimit from '@fastify/rate-limit';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.js';
import type { Database } from './db/index.js';
import { parseForm, registerBodyParsing } from './http/body.js';
import { registerErrorHandling } from './http/error-handler.js';
import { registerAuth } from './http/auth.js';
import { AppError } from './http/errors.js';
import { contactTypeRoutes } from './modules/contact-types/contact-types.routes.js';
import { fieldRoutes } from './modules/fields/fields.routes.js';
import { contactRoutes } from './modules/contacts/contacts.routes.js';
import { geoRoutes } from './modules/geo/geo.routes.js';

/** What the app needs from outside: configuration and an open, migrated database. */
export interface AppDeps {
  config: Config;
  database: Database;
  logger?: boolean | object;
}

export type App = FastifyInstance;

declare module 'fastify' {
  interface FastifyInstance {
    deps: AppDeps;
  }
}

/** Builds the Fastify instance with every plugin and module; never listens. */
export async function buildApp(deps: AppDeps): Promise<App> {
  const app = Fastify({
    logger: deps.logger ?? false,
    bodyLimit: 10 * 1024 * 1024,
    trustProxy: true,
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, querystringParser: (s: string) => parseForm(s) },
    ajv: { customOptions: { allErrors: true, coerceTypes: 'array', removeAdditional: true, useDefaults: true } },
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.decorate('deps', deps);

  registerErrorHandling(app);
  await app.register(compress, { threshold: 1024, global: true });
  await registerBodyParsing(app, { maxFileBytes: deps.config.maxCsvBytes });
  registerAuth(app, deps.database.db);
  if (deps.config.rateLimitPerMinute > 0) {
    await app.register(rateLimit, {
      hook: 'preHandler',
      max: deps.config.rateLimitPerMinute,
      timeWindow: 60_000,
      enableDraftSpec: true,
      keyGenerator: (req) => (req.userId ? `u${req.userId}` : `ip${req.ip}`),
      allowList: (req) => Boolean(req.routeOptions.config?.public),
      errorResponseBuilder: (_req, ctx) =>
        new AppError(429, `Too many requests: the limit is ${ctx.max} per minute. Retry in ${Math.ceil(ctx.ttl / 1000)} seconds.`),
    });
  }

  await app.register(contactTypeRoutes);
  await app.register(fieldRoutes);
  await app.register(contactRoutes);
  await app.register(geoRoutes);
  return app;
}
