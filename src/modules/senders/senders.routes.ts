import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok, okInErrors } from '../../http/envelope.js';
import { schemaErrors } from '../../http/error-handler.js';
import { sendList } from '../../http/list.js';
import { FailedText, OkCreated, OkInErrors, OkText, responses } from '../../http/schemas.js';
import { ListSendersQuery, SaveSenderBody, SenderDetails, SenderIdQuery, SenderList, UpdateSenderBody } from './senders.schema.js';
import { createSender, deleteSender, getSender, listSenders, resendVerification, updateSender } from './senders.service.js';

/** `/senders` and `/sender/…` endpoints (the verification link is in public/sender-verify.routes.ts). */
export const senderRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  // Clients call the list with GET or with POST: both work.
  app.route({
    config: { scope: 'senders.read' },
    method: ['GET', 'POST'],
    url: '/senders',
    schema: { summary: 'List senders', querystring: ListSendersQuery, response: responses(SenderList, 422) },
    handler: (req, reply) => sendList(reply, 'senders', req.query, listSenders(deps, req.userId)),
  });

  app.post(
    '/sender/save',
    {
      schema: { summary: 'Create a sender (mails a verification link)', body: SaveSenderBody, response: responses(OkCreated, 422) },
      config: { scope: 'senders.write', deferValidation: true },
    },
    async (req) => {
      const id = await createSender(deps, req.userId, req.body, schemaErrors(req));
      return ok('Added Successfully', { id });
    },
  );

  app.get(
    '/sender/details',
    {
      config: { scope: 'senders.read' },
      schema: { summary: 'View a sender', querystring: SenderIdQuery, response: responses(SenderDetails, 404, 422) },
    },
    async (req) => ok({ sender: await getSender(deps, req.userId, req.query.sender_id) }),
  );

  app.post(
    '/sender/update',
    {
      schema: { summary: 'Update a sender', body: UpdateSenderBody, response: responses(OkText, 404, 422) },
      config: { scope: 'senders.write', deferValidation: true },
    },
    async (req) => {
      await updateSender(deps, req.userId, req.body, schemaErrors(req));
      return ok('Updated Successfully');
    },
  );

  app.delete(
    '/sender/delete',
    {
      config: { scope: 'senders.write' },
      schema: { summary: 'Delete a sender', querystring: SenderIdQuery, response: responses(OkInErrors, 404, 422) },
    },
    async (req) => {
      await deleteSender(deps, req.userId, req.query.sender_id);
      return okInErrors('Deleted Successfully');
    },
  );

  const resendResponses = {
    ...responses(OkText, 404, 422),
    429: Type.Object(FailedText.properties, {
      description: 'Too many requests, or a verification mail went out less than a minute ago; `Retry-After` gives the seconds to wait.',
    }),
  };
  app.get(
    '/sender/resend-mail',
    {
      config: { scope: 'senders.write', action: true },
      // A GET that changes state: no implicit HEAD route, so a HEAD (a prefetcher, a link checker) mails nothing.
      exposeHeadRoute: false,
      schema: { summary: 'Mail a new verification link', querystring: SenderIdQuery, response: resendResponses },
    },
    async (req) => {
      await resendVerification(deps, req.userId, req.query.sender_id);
      return ok('Verification Mail Send');
    },
  );
};
