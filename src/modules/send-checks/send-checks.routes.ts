import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { responses } from '../../http/schemas.js';
import { CheckAnswer, CheckQuery } from './send-checks.schema.js';
import { checkSingleSend } from './send-checks.service.js';

/** `GET /single-send/check`: what deserves a look before a send goes. */
export const sendCheckRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  app.get(
    '/single-send/check',
    {
      config: { scope: 'sends.read' },
      schema: {
        summary: 'Check a single send before sending',
        description:
          'The send as saved (save a draft first to check what is being edited): every link of its design (footer included) ' +
          'with its kind, how many it would go to now (as `recipients-count`), and `warnings`, each with a `type` and a ' +
          '`message`: `link_anchor` (a link to `#…`, which goes nowhere in a mail), `link_empty`, `link_not_web` (not ' +
          '`http(s)://`, `mailto:`, `tel:` or a `((placeholder))`: a relative path, `javascript:`, `www.…` without its scheme), ' +
          '`unknown_placeholder` (neither a contact field nor a custom field: empty in every mail), `design_invalid`, ' +
          '`sender_not_verified` (or gone), `sender_domain_unauthenticated` (the domain of the sender address is no sending domain of the account: its mail is not signed with its own key), `sender_domain_failed` (the sending domain fails its checks: the send is refused) and `no_recipients`. An A/B test is checked variant by variant: each design ' +
          "of its own (its links too) and each variant's subject, those links and warnings naming it in `variant` and " +
          'their `message` (`Variant 2: …`). Nothing is refused: the send stays possible. ' +
          'Not found: `Record not found`.',
        querystring: CheckQuery,
        response: responses(CheckAnswer, 404, 422),
      },
    },
    async (req) => ok(await checkSingleSend(deps, req.userId, req.query.utr)),
  );
};
