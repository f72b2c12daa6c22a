import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sendList } from '../../http/list.js';
import { responses } from '../../http/schemas.js';
import { AuditList, AuditQuery } from './audit.schema.js';
import { listAudit } from './audit.service.js';

/** `GET /audit-log`: who changed what in the account, and every sign-in. */
export const auditRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  app.get(
    '/audit-log',
    {
      schema: {
        summary: 'The audit log',
        description:
          'Every change made through the API (any method but GET and HEAD, and the GET routes that change something), ' +
          'with its answer’s status, and every sign-in, failed sign-in and sign-out; newest first, kept 400 days. ' +
          'Filters: `actor_type` and `actor_id`, `action` (exactly), `since` and `until`.',
        querystring: AuditQuery,
        response: responses(AuditList, 422),
      },
      config: { scope: 'audit.read' },
    },
    (req, reply) => sendList(reply, 'entries', req.query, listAudit(deps, req.userId, req.query)),
  );
};
