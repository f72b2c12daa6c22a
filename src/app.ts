import Fastify, { LogController, type FastifyInstance } from 'fastify';
import compress from '@fastify/compress';
import rateLimit from '@fastify/rate-limit';
import cookie from '@fastify/cookie';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppDeps, AppInput } from './deps.js';
import { systemClock } from './util/clock.js';
import { MEMBERSHIP_LISTENERS } from './membership-listeners.js';
import { MAIL_KINDS } from './mail-kinds.js';
import { trustProxyOption } from './config.js';
import { createTransport } from './delivery/transports.js';
import { parseQuery, registerBodyParsing } from './http/body.js';
import { answerClientError, answerFrameworkError, registerErrorHandling } from './http/error-handler.js';
import { registerAuth } from './http/auth.js';
import { registerIdempotency } from './http/idempotency.js';
import { keyLookup } from './modules/access/keys.queries.js';
import { sessionLookup } from './modules/access/sessions.queries.js';
import { sessionRoutes } from './modules/access/sessions.routes.js';
import { meRoutes } from './modules/access/me.routes.js';
import { userRoutes } from './modules/access/users.routes.js';
import { keyRoutes } from './modules/access/keys.routes.js';
import { auditRoutes } from './modules/access/audit.routes.js';
import { registerAuditLog } from './modules/access/audit.hook.js';
import { registerOpenApi } from './http/openapi.js';
import { finiteNumbers } from './http/schemas.js';
import { AppError } from './http/errors.js';
import { contactTypeRoutes } from './modules/contact-types/contact-types.routes.js';
import { fieldRoutes } from './modules/fields/fields.routes.js';
import { contactRoutes } from './modules/contacts/contacts.routes.js';
import { contactCsvRoutes } from './modules/contacts/contacts.csv.routes.js';
import { geoRoutes } from './modules/geo/geo.routes.js';
import { senderRoutes } from './modules/senders/senders.routes.js';
import { sendingDomainRoutes } from './modules/sending-domains/sending-domains.routes.js';
import { notificationRoutes } from './modules/notifications/notifications.routes.js';
import { senderVerifyRoutes } from './public/sender-verify.routes.js';
import { segmentRoutes } from './modules/segments/segments.routes.js';
import { unsubscribeRoutes } from './modules/unsubscribes/unsubscribes.routes.js';
import { unsubscribeGroupRoutes } from './modules/unsubscribes/groups.routes.js';
import { templateRoutes } from './modules/templates/templates.routes.js';
import { singleSendRoutes } from './modules/single-sends/single-sends.routes.js';
import { automationRoutes } from './modules/automations/automations.routes.js';
import { testSendRoutes } from './modules/test-sends/test-sends.routes.js';
import { sendCheckRoutes } from './modules/send-checks/send-checks.routes.js';
import { imageRoutes } from './public/images.routes.js';
import { clickRoutes, trackingRoutes } from './public/tracking.routes.js';
import { unsubscribePageRoutes } from './public/unsubscribe.routes.js';
import { designPreviewRoutes } from './public/design-preview.routes.js';
import { consoleRoutes } from './public/console.routes.js';
import { providerRoutes } from './inbound/providers.routes.js';
import { healthRoutes } from './ops/health.routes.js';
import { inboundRoutes } from './inbound/inbound.routes.js';
import { reportRoutes } from './inbound/report.routes.js';
import { suppressionRoutes } from './modules/suppressions/suppressions.routes.js';
import { accountSettingsRoutes } from './modules/accounts/accounts.settings.routes.js';
import { formRoutes } from './modules/forms/forms.routes.js';
import { subscribeRoutes } from './public/subscribe.routes.js';
import { webhookRoutes } from './modules/webhooks/webhooks.routes.js';
import { overviewRoutes } from './modules/overview/overview.routes.js';
import { outboxRoutes } from './modules/outbox/outbox.routes.js';
import { designRoutes } from './modules/designs/designs.routes.js';
import { transactionalTemplateRoutes } from './modules/transactional/templates.routes.js';
import { mediaRoutes } from './modules/media/media.routes.js';
import { createMetricsRegistry, registerMetrics } from './ops/metrics.js';
import { registerRequestLog } from './ops/request-log.js';

/** Header values never to be written to a log, should a request or its headers be logged. */
const SECRET_HEADERS = ['req.headers.publickey', 'req.headers.secretkey', 'req.headers.authorization'];

export type App = FastifyInstance;

declare module 'fastify' {
  interface FastifyInstance {
    deps: AppDeps;
  }
}

/** Builds the Fastify instance with every plugin and module; never listens. */
export async function buildApp(deps: AppInput): Promise<App> {
  const logger =
    typeof deps.logger === 'object'
      ? { redact: SECRET_HEADERS, ...deps.logger }
      : deps.logger === true
        ? { redact: SECRET_HEADERS }
        : false;
  const app = Fastify({
    logger,
    // One line per request, written by registerRequestLog, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 10 * 1024 * 1024,
    trustProxy: trustProxyOption(deps.config.trustProxy),
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, querystringParser: (s: string) => parseQuery(s) },
    ajv: { customOptions: { allErrors: true, coerceTypes: 'array', removeAdditional: true, useDefaults: true }, plugins: [finiteNumbers] },
  }).withTypeProvider<TypeBoxTypeProvider>();
  const transport = deps.transport ?? createTransport(deps.config);
  if (!deps.transport) app.addHook('onClose', () => transport.close());
  const metrics = deps.metrics ?? createMetricsRegistry();
  const full: AppDeps = {
    ...deps,
    transport,
    log: deps.log ?? app.log,
    metrics,
    clock: deps.clock ?? systemClock,
    membershipListeners: deps.membershipListeners ?? MEMBERSHIP_LISTENERS,
  };
  app.decorate('deps', full);

  registerErrorHandling(app);
  registerRequestLog(app);
  await app.register(compress, { threshold: 1024, global: true });
  await registerBodyParsing(app, { maxFileBytes: deps.config.maxCsvBytes });
  await app.register(cookie);
  registerAuth(
    app,
    { database: deps.database, clock: full.clock, appSecret: deps.config.appSecret },
    keyLookup(deps.database),
    sessionLookup(deps.database),
  );
  if (deps.config.rateLimitPerMinute > 0) {
    await app.register(rateLimit, {
      hook: 'preValidation',
      max: deps.config.rateLimitPerMinute,
      timeWindow: 60_000,
      enableDraftSpec: true,
      // Per key and per person, not per account: one busy or narrow key must not use up the
      // whole account's allowance (key and person ids are of different tables, hence the prefix).
      keyGenerator: (req) => (req.principal ? `${req.principal.actor.type}${req.principal.actor.id}` : `ip${req.ip}`),
      allowList: (req) => Boolean(req.routeOptions.config?.public),
      errorResponseBuilder: (_req, ctx) =>
        new AppError(429, `Too many requests: the limit is ${ctx.max} per minute. Retry in ${Math.ceil(ctx.ttl / 1000)} seconds.`),
    });
  }
  // After the rate limiter (a refused request claims no key), before the routes it hooks into.
  registerIdempotency(app, { database: deps.database, clock: full.clock });
  registerAuditLog(app);

  await registerOpenApi(app);
  // After compression, so a scrape can be gzipped; its hook still counts every route below.
  registerMetrics(app, metrics, deps.config.metricsToken);
  await app.register(contactTypeRoutes);
  await app.register(fieldRoutes);
  await app.register(contactRoutes);
  await app.register(contactCsvRoutes);
  await app.register(geoRoutes);
  await app.register(senderRoutes);
  await app.register(sendingDomainRoutes);
  await app.register(notificationRoutes);
  await app.register(senderVerifyRoutes);
  await app.register(segmentRoutes);
  await app.register(unsubscribeRoutes);
  await app.register(unsubscribeGroupRoutes);
  await app.register(templateRoutes);
  await app.register(singleSendRoutes);
  await app.register(automationRoutes);
  await app.register(testSendRoutes);
  await app.register(sendCheckRoutes);
  await app.register(imageRoutes);
  // The public pages count events on messages of every kind of mail the service knows.
  await app.register(trackingRoutes, { kinds: MAIL_KINDS });
  await app.register(clickRoutes, { kinds: MAIL_KINDS });
  await app.register(unsubscribePageRoutes, { kinds: MAIL_KINDS });
  await app.register(designPreviewRoutes);
  await app.register(consoleRoutes(deps.config.consoleDir));
  await app.register(providerRoutes, { kinds: MAIL_KINDS });
  await app.register(healthRoutes);
  await app.register(suppressionRoutes);
  await app.register(accountSettingsRoutes);
  await app.register(webhookRoutes);
  await app.register(overviewRoutes);
  await app.register(outboxRoutes);
  await app.register(inboundRoutes, { kinds: MAIL_KINDS });
  // Bounce reports change the suppression list: scope `lists.write`, given here around the
  // inbound module's routes (its routes file is the inbound intake's own).
  await app.register(async (scoped) => {
    scoped.addHook('onRoute', (route) => {
      route.config = { ...route.config, scope: 'lists.write' };
    });
    await scoped.register(reportRoutes, { kinds: MAIL_KINDS });
  });
  await app.register(formRoutes);
  await app.register(subscribeRoutes);
  await app.register(designRoutes);
  await app.register(transactionalTemplateRoutes);
  await app.register(mediaRoutes);
  await app.register(keyRoutes);
  await app.register(auditRoutes);
  await app.register(userRoutes);
  await app.register(sessionRoutes);
  await app.register(meRoutes);
  return app;
}
