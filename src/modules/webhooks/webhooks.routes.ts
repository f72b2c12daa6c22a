import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { schemaErrors } from '../../http/error-handler.js';
import { sendList } from '../../http/list.js';
import { OkText, responses } from '../../http/schemas.js';
import {
  CreateEndpointBody,
  DeliveryList,
  EndpointCreated,
  EndpointIdBody,
  EndpointIdQuery,
  EndpointList,
  ListDeliveriesQuery,
  ListEndpointsQuery,
  RetryDeliveryBody,
  SecretRotated,
  UpdateEndpointBody,
} from './webhooks.schema.js';
import {
  createEndpoint,
  deleteEndpoint,
  listDeliveries,
  listEndpoints,
  retryDelivery,
  rotateSecret,
  updateEndpoint,
} from './webhooks.service.js';

/** `/webhooks/…` endpoints: the account's receivers of outgoing webhooks and their deliveries log. */
export const webhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  app.get(
    '/webhooks/endpoints',
    {
      config: { scope: 'webhooks.read' },
      schema: { summary: 'List webhook endpoints', querystring: ListEndpointsQuery, response: responses(EndpointList, 422) },
    },
    (req, reply) => sendList(reply, 'endpoints', req.query, listEndpoints(deps, req.userId)),
  );

  app.post(
    '/webhooks/endpoints/create',
    {
      schema: { summary: 'Create a webhook endpoint', body: CreateEndpointBody, response: responses(EndpointCreated, 422) },
      config: { scope: 'webhooks.write', deferValidation: true },
    },
    async (req) => ok(await createEndpoint(deps, req.userId, req.body, schemaErrors(req))),
  );

  app.post(
    '/webhooks/endpoints/update',
    {
      schema: { summary: 'Update a webhook endpoint', body: UpdateEndpointBody, response: responses(OkText, 404, 422) },
      config: { scope: 'webhooks.write', deferValidation: true },
    },
    async (req) => {
      await updateEndpoint(deps, req.userId, req.body, schemaErrors(req));
      return ok('Updated Successfully');
    },
  );

  app.delete(
    '/webhooks/endpoints/delete',
    {
      config: { scope: 'webhooks.write' },
      schema: { summary: 'Delete a webhook endpoint', querystring: EndpointIdQuery, response: responses(OkText, 404, 422) },
    },
    async (req) => {
      await deleteEndpoint(deps, req.userId, req.query.id);
      return ok('Deleted Successfully');
    },
  );

  app.post(
    '/webhooks/endpoints/rotate-secret',
    {
      schema: { summary: "Rotate a webhook endpoint's secret", body: EndpointIdBody, response: responses(SecretRotated, 404, 422) },
      config: { scope: 'webhooks.write' },
    },
    async (req) => ok({ secret: await rotateSecret(deps, req.userId, req.body.id) }),
  );

  app.get(
    '/webhooks/deliveries',
    {
      config: { scope: 'webhooks.read' },
      schema: {
        summary: "List a webhook endpoint's delivery attempts",
        querystring: ListDeliveriesQuery,
        response: responses(DeliveryList, 404, 422),
      },
    },
    async (req, reply) => sendList(reply, 'deliveries', req.query, await listDeliveries(deps, req.userId, req.query.endpoint_id)),
  );

  app.post(
    '/webhooks/deliveries/retry',
    {
      config: { scope: 'webhooks.write' },
      schema: { summary: 'Send an event to an endpoint again now', body: RetryDeliveryBody, response: responses(OkText, 404, 409, 422) },
    },
    async (req) => {
      await retryDelivery(deps, req.userId, req.body.endpoint_id, req.body.event_id);
      return ok('Retry Queued');
    },
  );
};
