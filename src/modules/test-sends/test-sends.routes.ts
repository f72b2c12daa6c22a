import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { schemaErrors } from '../../http/error-handler.js';
import { OkText, responses } from '../../http/schemas.js';
import { PreviewAnswer, PreviewQuery, TestAutomationEmailBody, TestSingleSendBody } from './test-sends.schema.js';
import { previewSingleSend } from './test-sends.preview.js';
import { testAutomationEmail, testSingleSend } from './test-sends.service.js';

const SENT = 'Sent Successfully';

/**
 * `POST /single/send/test` and `POST /automations/schedule/test`: a mail to a few addresses before
 * the real one goes; `GET /single-send/preview`: the mail as one contact would get it.
 */
export const testSendRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  app.post(
    '/single/send/test',
    {
      schema: {
        summary: 'Send a test of a single send',
        description:
          "The send's mail goes at once to each address, its subject starting with `[Test] `. Its placeholders are filled with " +
          "the data of `contact_id` when given; else of the account's contact with that address; else of the send's first " +
          'recipient (the oldest contact its targets name, less exclusions; none: empty). Using a contact other than the ' +
          "address's own takes `contacts.read` as well (without it: `contact_id` answers 403, the default leaves placeholders " +
          "empty). Counted in no statistic; the send's status does not change. Its sender must be verified (422 on `sender_id` otherwise).",
        body: TestSingleSendBody,
        response: responses(OkText, 404, 422),
      },
      config: { scope: 'sends.write', deferValidation: true },
    },
    async (req) => {
      await testSingleSend(deps, req.principal!, req.body, schemaErrors(req));
      return ok(SENT);
    },
  );

  app.post(
    '/automations/schedule/test',
    {
      schema: {
        summary: 'Send a test of an automation email',
        description:
          'The automation email goes at once to each address, as `/single/send/test` does for a single send (its default ' +
          "contact: the oldest of the automation's contact type or segment). `utr` is the email's (from the automation's schedule list).",
        body: TestAutomationEmailBody,
        response: responses(OkText, 404, 422),
      },
      config: { scope: 'automations.write', deferValidation: true },
    },
    async (req) => {
      await testAutomationEmail(deps, req.principal!, req.body, schemaErrors(req));
      return ok(SENT);
    },
  );

  app.get(
    '/single-send/preview',
    {
      schema: {
        summary: "Preview a single send's mail as a contact",
        description:
          "The send's subject, HTML and text as `contact_id` would get them (by default the send's first recipient, as for " +
          'tests), footer included; nothing is counted (no open pixel, no click tracking) and the unsubscribe link goes ' +
          "nowhere (`#`). Using a contact's data takes `contacts.read` as well (without it: `contact_id` answers 403, the " +
          'default leaves placeholders empty). Not found: `Record not found`.',
        querystring: PreviewQuery,
        response: responses(PreviewAnswer, 404, 422),
      },
      config: { scope: 'sends.read', deferValidation: true },
    },
    async (req) => ok({ preview: await previewSingleSend(deps, req.principal!, req.query, schemaErrors(req)) }),
  );
};
