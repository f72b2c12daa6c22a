import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { sendList } from '../../http/list.js';
import { OkText, responses } from '../../http/schemas.js';
import { LiftQuery, ListSuppressionsQuery, SuppressionList } from './suppressions.schema.js';
import { liftSuppression, listSuppressions } from './suppressions.service.js';

/** `GET /suppressions`, `DELETE /suppressions/delete`: the account's suppressed addresses. */
export const suppressionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  app.get(
    '/suppressions',
    {
      config: { scope: 'lists.read' },
      schema: { summary: 'List suppressed addresses', querystring: ListSuppressionsQuery, response: responses(SuppressionList, 422) },
    },
    (req, reply) => sendList(reply, 'suppressions', req.query, listSuppressions(deps, req.userId)),
  );

  app.delete(
    '/suppressions/delete',
    {
      config: { scope: 'lists.write' },
      schema: { summary: 'Lift the suppression of an address', querystring: LiftQuery, response: responses(OkText, 404, 422) },
    },
    async (req) => {
      await liftSuppression(deps, req.userId, req.query.email);
      return ok('Deleted Successfully');
    },
  );
};
