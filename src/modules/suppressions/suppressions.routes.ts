import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { sendList } from '../../http/list.js';
import { OkText, responses } from '../../http/schemas.js';
import { LiftQuery, ListSuppressionsQuery, ReportBody, SuppressionList } from './suppressions.schema.js';
import { liftSuppression, listSuppressions, reportBounce } from './suppressions.service.js';

/** `POST /bounces/report`, `GET /suppressions`, `DELETE /suppressions/delete` (contract §19). */
export const suppressionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  app.post(
    '/bounces/report',
    {
      schema: {
        summary: 'Report a bounce or spam complaint',
        description:
          'With `message_id`, matched to that message of the account (counted once on it); without, applied to the address in the account only. ' +
          'Hard: the address is suppressed; soft: suppressed at 3 soft bounces within 30 days; complaint: globally unsubscribed and suppressed.',
        body: ReportBody,
        response: responses(OkText, 422),
      },
    },
    async (req) => {
      await reportBounce(deps, req.userId, req.body);
      return ok('Recorded Successfully');
    },
  );

  app.get(
    '/suppressions',
    { schema: { summary: 'List suppressed addresses', querystring: ListSuppressionsQuery, response: responses(SuppressionList, 422) } },
    (req, reply) => sendList(reply, 'suppressions', req.query, listSuppressions(deps, req.userId)),
  );

  app.delete(
    '/suppressions/delete',
    { schema: { summary: 'Lift the suppression of an address', querystring: LiftQuery, response: responses(OkText, 404, 422) } },
    async (req) => {
      await liftSuppression(deps, req.userId, req.query.email);
      return ok('Deleted Successfully');
    },
  );
};
