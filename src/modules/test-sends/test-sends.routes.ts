import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { schemaErrors } from '../../http/error-handler.js';
import { OkText, responses } from '../../http/schemas.js';
import { TestAutomationEmailBody, TestSingleSendBody } from './test-sends.schema.js';
import { testAutomationEmail, testSingleSend } from './test-sends.service.js';

const SENT = 'Sent Successfully';

/** `POST /single/send/test` and `POST /automations/schedule/test`: a mail to a few addresses before the real one goes. */
export const testSendRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  app.post(
    '/single/send/test',
    {
      schema: {
        summary: 'Send a test of a single send',
        description:
          "The send's mail goes at once to each address, its subject starting with `[Test] `, its placeholders filled from the " +
          "account's contact with that address (else empty). Counted in no statistic; the send's status does not change. " +
          'Its sender must be verified (422 on `sender_id` otherwise).',
        body: TestSingleSendBody,
        response: responses(OkText, 404, 422),
      },
      config: { scope: 'sends.write', deferValidation: true },
    },
    async (req) => {
      await testSingleSend(deps, req.userId, req.body, schemaErrors(req));
      return ok(SENT);
    },
  );

  app.post(
    '/automations/schedule/test',
    {
      schema: {
        summary: 'Send a test of an automation email',
        description:
          'The automation email goes at once to each address, as `/single/send/test` does for a single send. `utr` is the ' +
          "email's (from the automation's schedule list).",
        body: TestAutomationEmailBody,
        response: responses(OkText, 404, 422),
      },
      config: { scope: 'automations.write', deferValidation: true },
    },
    async (req) => {
      await testAutomationEmail(deps, req.userId, req.body, schemaErrors(req));
      return ok(SENT);
    },
  );
};
