import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { ok } from '../http/envelope.js';
import { AppError } from '../http/errors.js';
import { RELAY_BODY_LIMIT } from '../http/body.js';
import { Success } from '../http/schemas.js';
import type { MailKinds } from '../messages/messages.kinds.js';
import { takeInEvent, type InboundEvent } from './intake.js';
import { BadSignature, parseJsonBody } from './relay-input.js';
import { SENDGRID_SIGNATURE_HEADER, SENDGRID_TIMESTAMP_HEADER, sendgridEvents, sendgridVerifier } from './sendgrid.js';
import { mailgunEvents, verifyMailgun } from './mailgun.js';
import { postmarkEvents, verifyPostmarkAuth } from './postmark.js';
import {
  CertificateUnavailable,
  confirmSubscription,
  fetchText,
  sesEvents,
  sesNotificationOf,
  snsCertificates,
  snsMessageOf,
  verifySnsSignature,
  type FetchText,
} from './ses.js';

const failure = (description: string) => Type.Object({ status: Type.Literal('failed'), errors: Type.String() }, { description });

/** The answers every relay webhook gives. */
const RESPONSES: Record<number, TSchema> = {
  200: Success(
    Type.Object({
      received: Type.Integer({
        minimum: 0,
        description:
          'How many bounces and complaints the payload held, each taken in once (a repeated event is received again but counts once). ' +
          'Events of other kinds (delivered, opened, deferred, …) are not counted.',
      }),
    }),
    'The payload was verified and taken in.',
  ),
  400: failure('The body is not JSON, or not the shape the provider sends; nothing was taken in.'),
  401: failure('The signature or password does not verify; nothing was taken in.'),
  404: failure('`Route not found`: the webhook is not configured on this installation.'),
  413: failure('The request body is over 5 MB.'),
  500: failure('Unexpected failure (the database away): the provider retries, and events already taken in count once.'),
};

/** A relay webhook's schema: its summary and description, its documented body and headers. */
function schemaOf(summary: string, description: string, extra: Record<string, unknown> = {}) {
  return { summary, description, consumes: ['application/json'], response: RESPONSES, ...extra };
}

const JsonPayload = (description: string) => Type.Unknown({ description });

/** The exact body bytes of each request, kept by the parser below (signatures are over them). */
const bodies = new WeakMap<FastifyRequest, Buffer>();

/** A hook answering 404 `Route not found` until the webhook's setting is given. */
const openWhen = (enabled: (config: Config) => boolean) => async (req: FastifyRequest) => {
  if (!enabled(req.server.deps.config)) throw new AppError(404, 'Route not found');
};

/**
 * The relay webhooks, public routes (the provider's signature or password is the credential):
 * `POST /inbound/sendgrid`, `/inbound/mailgun`, `/inbound/postmark`, `/inbound/ses`. Each reads
 * its body as bytes, verifies it, turns it into `InboundEvent`s and takes each in through
 * `takeInEvent`. A failure to take one in is a 500, so the provider retries the whole payload;
 * the events taken in before count once. `opts.fetchText` replaces the HTTPS fetch of SNS
 * certificates and confirmation links (tests).
 */
export const providerRoutes: FastifyPluginAsyncTypebox<{ kinds: MailKinds; fetchText?: FetchText }> = async (app, opts) => {
  const config = app.deps.config;
  // Only these routes: every body is kept as sent, whatever its content type (SNS posts JSON as text/plain).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: RELAY_BODY_LIMIT }, (req, body, done) => {
    bodies.set(req, body as Buffer);
    done(null, undefined);
  });
  const raw = (req: FastifyRequest) => bodies.get(req) ?? Buffer.alloc(0);

  /** Takes in each event, in order; answers how many there were. */
  async function takeIn(req: FastifyRequest, events: InboundEvent[]) {
    for (const event of events) {
      const result = await takeInEvent(app.deps, opts.kinds, event);
      req.log.debug({ source: event.source, kind: event.kind, type: event.type, eventKey: event.eventKey, ...result }, 'relay event');
    }
    return ok({ received: events.length });
  }

  // A key that cannot be read is a configuration error, reported at start rather than on each event.
  const sendgridVerify = config.sendgridWebhookPublicKey ? sendgridVerifier(config.sendgridWebhookPublicKey) : null;
  app.post(
    '/inbound/sendgrid',
    {
      schema: schemaOf(
        'SendGrid Event Webhook',
        'SendGrid\'s Event Webhook with "Signed Event Webhook" on: the ECDSA signature of the timestamp and the body is checked with ' +
          '`SENDGRID_WEBHOOK_PUBLIC_KEY`. `bounce` (`blocked`: soft), `dropped` for a bounced, invalid or spam-reporting address, and ' +
          '`spamreport` are taken in, matched by `smtp-id`; other events are ignored. Answers 404 until the key is set.',
        {
          headers: Type.Object({
            [SENDGRID_SIGNATURE_HEADER]: Type.Optional(Type.String({ description: 'Base64 ECDSA signature.' })),
            [SENDGRID_TIMESTAMP_HEADER]: Type.Optional(Type.String({ description: 'The signed timestamp.' })),
          }),
        },
      ),
      bodyLimit: RELAY_BODY_LIMIT,
      config: { public: true, documentedBody: JsonPayload('A JSON array of SendGrid events, as SendGrid posts it.') },
      onRequest: openWhen((c) => c.sendgridWebhookPublicKey !== null),
    },
    async (req) => {
      const body = raw(req);
      if (!sendgridVerify?.(body, req.headers[SENDGRID_SIGNATURE_HEADER], req.headers[SENDGRID_TIMESTAMP_HEADER])) {
        throw new BadSignature('The SendGrid signature does not verify.');
      }
      return takeIn(req, sendgridEvents(parseJsonBody(body)));
    },
  );

  app.post(
    '/inbound/mailgun',
    {
      schema: schemaOf(
        'Mailgun webhooks',
        "Mailgun's JSON webhooks (`failed`, `complained`): the HMAC-SHA256 of `signature.timestamp` and `signature.token` is checked " +
          'with `MAILGUN_WEBHOOK_SIGNING_KEY`. Permanent failures are bounces, temporary ones (Mailgun retries) are ignored; matched by ' +
          '`message.headers.message-id`. Answers 404 until the key is set.',
      ),
      bodyLimit: RELAY_BODY_LIMIT,
      config: { public: true, documentedBody: JsonPayload('`{"signature": {…}, "event-data": {…}}`, as Mailgun posts it.') },
      onRequest: openWhen((c) => c.mailgunWebhookSigningKey !== null),
    },
    async (req) => {
      const payload = parseJsonBody(raw(req));
      if (!verifyMailgun(payload, config.mailgunWebhookSigningKey!)) throw new BadSignature('The Mailgun signature does not verify.');
      return takeIn(req, mailgunEvents(payload));
    },
  );

  app.post(
    '/inbound/postmark',
    {
      schema: schemaOf(
        'Postmark bounce and spam complaint webhooks',
        "Postmark's Bounce and Spam Complaint webhooks, with the HTTP basic auth `POSTMARK_WEBHOOK_AUTH` (`user:password`) in the " +
          'webhook URL. Matched by `Metadata.message_ref` (our VERP token) or the original `Message-ID` in `Content`. ' +
          'Answers 404 until the credentials are set.',
      ),
      bodyLimit: RELAY_BODY_LIMIT,
      config: { public: true, documentedBody: JsonPayload('One Postmark webhook record (`RecordType` `Bounce` or `SpamComplaint`).') },
      onRequest: openWhen((c) => c.postmarkWebhookAuth !== null),
    },
    async (req) => {
      if (!verifyPostmarkAuth(req.headers.authorization, config.postmarkWebhookAuth!)) {
        throw new BadSignature('Invalid webhook credentials.', { 'WWW-Authenticate': 'Basic realm="postmark"' });
      }
      return takeIn(req, postmarkEvents(parseJsonBody(raw(req), ['ID'])));
    },
  );

  const certificates = snsCertificates(config.snsCertFile, opts.fetchText ?? fetchText);
  app.post(
    '/inbound/ses',
    {
      schema: schemaOf(
        'Amazon SES notifications through SNS',
        'An HTTPS subscription of an SNS topic that SES publishes bounce and complaint notifications to. The SNS signature (versions 1 and 2) ' +
          'is checked with the certificate at `SigningCertURL` (https, `sns.<region>.amazonaws.com` only) or the one in `SNS_CERT_FILE`. ' +
          'A subscription confirmation is confirmed. Matched by `mail.commonHeaders.messageId` or the `Message-ID` in `mail.headers`. ' +
          'Answers 404 unless `SES_WEBHOOK` is set.',
        {
          consumes: ['application/json', 'text/plain'],
          response: { ...RESPONSES, 503: failure('The SNS signing certificate could not be fetched; SNS retries.') },
        },
      ),
      bodyLimit: RELAY_BODY_LIMIT,
      config: {
        public: true,
        documentedBody: JsonPayload('One SNS message (`Notification`, `SubscriptionConfirmation`, …), as SNS posts it.'),
      },
      onRequest: openWhen((c) => c.sesWebhook),
    },
    async (req) => {
      const message = snsMessageOf(parseJsonBody(raw(req)));
      let cert: string;
      try {
        cert = await certificates(message.SigningCertURL);
      } catch (err) {
        if (err instanceof CertificateUnavailable) {
          req.log.warn({ err }, 'SNS certificate not fetched');
          throw new AppError(503, 'The SNS signing certificate could not be fetched; retry later.');
        }
        throw err;
      }
      if (!verifySnsSignature(message, cert)) throw new BadSignature('The SNS signature does not verify.');
      if (message.Type === 'SubscriptionConfirmation') {
        const outcome = await confirmSubscription(message, opts.fetchText ?? fetchText);
        req.log.info({ topic: message.TopicArn, outcome }, 'SNS subscription confirmation');
        return ok({ received: 0 });
      }
      if (message.Type === 'UnsubscribeConfirmation') {
        req.log.info({ topic: message.TopicArn }, 'SNS subscription ended');
        return ok({ received: 0 });
      }
      return takeIn(req, sesEvents(sesNotificationOf(message)));
    },
  );
};
