import { createHash, timingSafeEqual } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../http/envelope.js';
import { FORM_LIMIT } from '../http/body.js';
import { AppError } from '../http/errors.js';
import { FailedText, Nullable, Success } from '../http/schemas.js';
import type { MailKinds } from '../messages/messages.kinds.js';
import { takeInMail } from './inbound.service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The raw message of `POST /inbound/email/<token>` (its body, unparsed). */
    inboundMail?: Buffer | null;
  }
}

/** The content types of a raw message. */
const RAW_TYPES = ['message/rfc822', 'text/plain'];

const NOT_FOUND = 'Route not found';

/** Whether `given` is the configured token (compared in constant time, through hashes of equal length). */
function tokenMatches(expected: string | null, given: string): boolean {
  if (!expected) return false;
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(expected), digest(given));
}

const Intake = Success(
  Type.Object({
    kind: Type.Union([Type.Literal('bounce'), Type.Literal('complaint'), Type.Literal('ignored')], {
      description: '`ignored`: no failure (a DSN whose action is delayed, delivered, relayed or expanded) or nothing recognised.',
    }),
    type: Nullable(Type.Union([Type.Literal('hard'), Type.Literal('soft')], { description: 'Bounces only.' })),
    recipient: Nullable(Type.String({ description: 'The address the report is about (the first, when it names several).' })),
    matched: Type.Boolean({ description: 'Whether it named a message of this installation (else it changed nothing).' }),
  }),
  'What the message was, and whether it named a message of this installation.',
);

const schema = {
  summary: 'Take in a bounce or complaint as raw mail',
  description:
    'Public; the path token is `INBOUND_TOKEN` (unset: 404). The body is one raw RFC 5322 message (`message/rfc822` or `text/plain`): ' +
    'a delivery status notification (RFC 3464), an abuse report (ARF, RFC 5965) or a common non-standard bounce text. ' +
    'It is matched to the message it names (VERP address, else Message-ID), counted once, and applied (see docs/bounces.md).',
  tags: ['Bounces and complaints'],
  params: Type.Object({ token: Type.String({ maxLength: 512 }) }),
  response: {
    200: Intake,
    404: Type.Object(
      { status: Type.Literal('failed'), errors: Type.String() },
      { description: '`Route not found`: no INBOUND_TOKEN, or another token.' },
    ),
    413: FailedText,
    415: FailedText,
    422: FailedText,
    500: FailedText,
  },
};

/**
 * `POST /inbound/email/<INBOUND_TOKEN>`: the raw-mail intake route. Its raw body parser is
 * registered in this plugin only (encapsulated), so no other route reads `text/plain` as mail.
 * The token is checked before the body is read.
 */
export const inboundRoutes: FastifyPluginAsyncTypebox<{ kinds: MailKinds }> = async (app, { kinds }) => {
  const { deps } = app;
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser(RAW_TYPES, { parseAs: 'buffer' }, (req, body, done) => {
    req.inboundMail = body as Buffer;
    done(null, {});
  });
  app.post(
    '/inbound/email/:token',
    {
      schema,
      config: { public: true },
      // A bounce may quote the whole message it returns: as much as the SMTP listener takes.
      bodyLimit: FORM_LIMIT,
      onRequest: async (req) => {
        if (!tokenMatches(deps.config.inboundToken, (req.params as { token: string }).token ?? '')) throw new AppError(404, NOT_FOUND);
      },
    },
    async (req) => {
      const type = String(req.headers['content-type'] ?? '')
        .split(';')[0]
        .trim()
        .toLowerCase();
      if (req.inboundMail == null && type !== '' && !RAW_TYPES.includes(type)) {
        throw new AppError(415, 'Unsupported content type: send the raw message as message/rfc822 or text/plain.');
      }
      return ok(await takeInMail(deps, kinds, req.inboundMail ?? Buffer.alloc(0), 'inbound'));
    },
  );
};
