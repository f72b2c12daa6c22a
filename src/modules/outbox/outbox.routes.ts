import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { responses } from '../../http/schemas.js';
import { OutboxAnswer, OutboxQuery } from './outbox.schema.js';
import { outbox } from './outbox.service.js';

/** `GET /outbox`: where mail goes, and the newest mails in the outbox folder when no SMTP server is set. */
export const outboxRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/outbox',
    {
      // The mails' links act for their recipients (unsubscribe, confirm, verify a sender): only
      // those who may change the account's settings see them.
      config: { scope: 'settings.write' },
      schema: {
        summary: 'Where mail goes, and the newest mails written to the outbox folder',
        description:
          'Without `SMTP_URL` the service writes every mail to files in its outbox folder instead of sending it. This route says ' +
          "which mode the service is in and, in outbox mode, lists the account's newest mails there (subject, recipient, links " +
          'decoded), so a first sender can be verified without opening the files.',
        querystring: OutboxQuery,
        response: responses(OutboxAnswer, 422),
      },
    },
    async (req) => ok(await outbox(app.deps, req.userId, req.query.limit ?? 10)),
  );
};
