import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { schemaErrors } from '../../http/error-handler.js';
import { sendList } from '../../http/list.js';
import { OkText, responses } from '../../http/schemas.js';
import { CreateDomainBody, DomainAnswer, DomainIdBody, DomainIdQuery, DomainList, ListDomainsQuery } from './sending-domains.schema.js';
import { checkDomain, createDomain, deleteDomain, getDomain, listDomains } from './sending-domains.service.js';

/** `/sending-domains/…`: the account's sending domains, their DKIM keys, records and checks. */
export const sendingDomainRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  app.get(
    '/sending-domains',
    {
      config: { scope: 'senders.read' },
      schema: { summary: 'List sending domains', querystring: ListDomainsQuery, response: responses(DomainList, 422) },
    },
    (req, reply) => sendList(reply, 'domains', req.query, listDomains(deps, req.userId)),
  );

  app.post(
    '/sending-domains/create',
    {
      schema: {
        summary: 'Add a sending domain (makes its DKIM key)',
        body: CreateDomainBody,
        response: responses(DomainAnswer, 422),
      },
      config: { scope: 'senders.write', deferValidation: true },
    },
    async (req) => ok({ domain: await createDomain(deps, req.userId, req.body, schemaErrors(req)) }),
  );

  app.get(
    '/sending-domains/details',
    {
      config: { scope: 'senders.read' },
      schema: {
        summary: 'View a sending domain (its last checks; reading checks nothing)',
        querystring: DomainIdQuery,
        response: responses(DomainAnswer, 404, 422),
      },
    },
    async (req) => ok({ domain: await getDomain(deps, req.userId, req.query.id) }),
  );

  app.post(
    '/sending-domains/check',
    {
      schema: { summary: 'Check a sending domain against DNS now', body: DomainIdBody, response: responses(DomainAnswer, 404, 422) },
      config: { scope: 'senders.write' },
    },
    async (req) => ok({ domain: await checkDomain(deps, req.userId, req.body.id) }),
  );

  app.delete(
    '/sending-domains/delete',
    {
      config: { scope: 'senders.write' },
      schema: { summary: 'Delete a sending domain', querystring: DomainIdQuery, response: responses(OkText, 404, 422) },
    },
    async (req) => {
      await deleteDomain(deps, req.userId, req.query.id);
      return ok('Deleted Successfully');
    },
  );
};
