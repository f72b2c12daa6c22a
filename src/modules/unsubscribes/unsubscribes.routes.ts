import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { schemaErrors } from '../../http/error-handler.js';
import { sendList } from '../../http/list.js';
import { StrIds } from '../../http/schemas.js';
import { ListGlobalQuery, ManuallyAddBody, RecipientsListQuery, SaveGlobalBody, UnsubscriberIdQuery } from './unsubscribes.schema.js';
import {
  addGlobalUnsubscribes,
  addGroupRecipients,
  bulkDeleteUnsubscribers,
  deleteUnsubscriber,
  globalUnsubscribeList,
  groupRecipientList,
} from './unsubscribes.service.js';

/** The created ids: `id` of the first address (contract §1) and `ids` of all, in input order. */
const added = (ids: number[]) => ok('Added Successfully', { id: ids[0], ids });

/** `/global-unsubscribes…` and the recipient endpoints of `/unsubscribes-groups…`. */
export const unsubscribeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.deps.database;

  app.get('/global-unsubscribes', { schema: { querystring: ListGlobalQuery } }, (req, reply) =>
    sendList(reply, 'unSubscribers', req.query, globalUnsubscribeList(db, req.userId)),
  );

  app.post('/global-unsubscribes/save', { schema: { body: SaveGlobalBody } }, async (req) =>
    added(await addGlobalUnsubscribes(db, req.userId, req.body.email_address)),
  );

  app.delete('/global-unsubscribes/delete', { schema: { querystring: UnsubscriberIdQuery } }, async (req) => {
    await deleteUnsubscriber(db, req.userId, req.query.id, 'global');
    return ok('Deleted Successfully');
  });

  app.post('/global-unsubscribes/bulk-delete', { schema: { body: StrIds } }, async (req) => {
    await bulkDeleteUnsubscribers(db, req.userId, req.body.strIds, 'global');
    return ok('Deleted Successfully');
  });

  app.post('/unsubscribes-groups/manually-add', { schema: { body: ManuallyAddBody }, config: { deferValidation: true } }, async (req) =>
    added(await addGroupRecipients(db, req.userId, req.body, schemaErrors(req))),
  );

  app.get('/unsubscribes-groups/recipients-list', { schema: { querystring: RecipientsListQuery } }, async (req, reply) =>
    sendList(reply, 'recipients', req.query, await groupRecipientList(db, req.userId, req.query.groupId)),
  );

  app.delete('/unsubscribes-groups/recipients-delete', { schema: { querystring: UnsubscriberIdQuery } }, async (req) => {
    await deleteUnsubscriber(db, req.userId, req.query.id, 'groups');
    return ok('Deleted Successfully');
  });

  app.post('/unsubscribes-groups/recipients-bulk-delete', { schema: { body: StrIds } }, async (req) => {
    await bulkDeleteUnsubscribers(db, req.userId, req.body.strIds, 'groups');
    return ok('Deleted Successfully');
  });
};
