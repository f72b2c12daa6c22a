import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok, okInErrors } from '../../http/envelope.js';
import { schemaErrors } from '../../http/error-handler.js';
import { sendList } from '../../http/list.js';
import { ListSendersQuery, SaveSenderBody, SenderIdQuery, UpdateSenderBody } from './senders.schema.js';
import { createSender, deleteSender, getSender, resendVerification, senderList, updateSender } from './senders.service.js';

/** `/senders` and `/sender/…` endpoints (the verification link is in public/sender-verify.routes.ts). */
export const senderRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;
  const { db } = deps.database;

  // The spec describes the list as GET and as POST: both work.
  app.route({
    method: ['GET', 'POST'],
    url: '/senders',
    schema: { querystring: ListSendersQuery },
    handler: (req, reply) => sendList(reply, 'senders', req.query, senderList(db, req.userId)),
  });

  app.post('/sender/save', { schema: { body: SaveSenderBody }, config: { deferValidation: true } }, async (req) => {
    const id = await createSender(deps, req.userId, req.body, schemaErrors(req));
    return ok('Added Successfully', { id });
  });

  app.get('/sender/details', { schema: { querystring: SenderIdQuery } }, async (req) =>
    ok({ sender: await getSender(db, req.userId, req.query.sender_id) }),
  );

  app.post('/sender/update', { schema: { body: UpdateSenderBody }, config: { deferValidation: true } }, async (req) => {
    await updateSender(deps, req.userId, req.body, schemaErrors(req));
    return ok('Updated Successfully');
  });

  app.delete('/sender/delete', { schema: { querystring: SenderIdQuery } }, async (req) => {
    await deleteSender(db, req.userId, req.query.sender_id);
    return okInErrors('Deleted Successfully');
  });

  app.get('/sender/resend-mail', { schema: { querystring: SenderIdQuery } }, async (req) => {
    await resendVerification(deps, req.userId, req.query.sender_id);
    return ok('Verification Mail Send');
  });
};
