import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { schemaErrors } from '../../http/error-handler.js';
import { sendList } from '../../http/list.js';
import { GroupBody, GroupIdQuery, ListGroupsQuery } from './groups.schema.js';
import { createGroup, deleteGroup, getGroup, groupList, updateGroup } from './groups.service.js';

/** `/unsubscribes-groups…` endpoints for the groups themselves (recipients: unsubscribes.routes.ts). */
export const unsubscribeGroupRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.deps.database;

  app.get('/unsubscribes-groups', { schema: { querystring: ListGroupsQuery } }, (req, reply) =>
    sendList(reply, 'unsubscribesGroups', req.query, groupList(db, req.userId)),
  );

  app.post('/unsubscribes-groups/save', { schema: { body: GroupBody }, config: { deferValidation: true } }, async (req) => {
    const id = await createGroup(db, req.userId, req.body, schemaErrors(req));
    return ok('Saved Successfully', { id });
  });

  app.get('/unsubscribes-groups/details', { schema: { querystring: GroupIdQuery } }, async (req) =>
    ok({ unsubscribesGroup: await getGroup(db, req.userId, req.query.id) }),
  );

  // The id travels in the query, the fields in the body (spec).
  app.post(
    '/unsubscribes-groups/update',
    { schema: { querystring: GroupIdQuery, body: GroupBody }, config: { deferValidation: true } },
    async (req) => {
      await updateGroup(db, req.userId, req.query.id, req.body, schemaErrors(req));
      return ok('Updated Successfully');
    },
  );

  app.delete('/unsubscribes-groups/delete', { schema: { querystring: GroupIdQuery } }, async (req) => {
    await deleteGroup(db, req.userId, req.query.id);
    return ok('Deleted Successfully');
  });
};
