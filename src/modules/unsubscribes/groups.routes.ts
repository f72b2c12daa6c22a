import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { schemaErrors } from '../../http/error-handler.js';
import { sendList } from '../../http/list.js';
import { OkCreated, OkText, responses } from '../../http/schemas.js';
import { GroupBody, GroupIdQuery, ListGroupsQuery, UnsubscribeGroupDetails, UnsubscribeGroupList } from './groups.schema.js';
import { createGroup, deleteGroup, getGroup, listUnsubscribeGroups, updateGroup } from './groups.service.js';

/** `/unsubscribes-groups…` endpoints for the groups themselves (recipients: unsubscribes.routes.ts). */
export const unsubscribeGroupRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  app.get(
    '/unsubscribes-groups',
    {
      config: { scope: 'lists.read' },
      schema: { summary: 'List unsubscribe groups', querystring: ListGroupsQuery, response: responses(UnsubscribeGroupList, 422) },
    },
    (req, reply) => sendList(reply, 'unsubscribesGroups', req.query, listUnsubscribeGroups(deps, req.userId)),
  );

  app.post(
    '/unsubscribes-groups/save',
    {
      schema: { summary: 'Create an unsubscribe group', body: GroupBody, response: responses(OkCreated, 422) },
      config: { scope: 'lists.write', deferValidation: true },
    },
    async (req) => {
      const id = await createGroup(deps, req.userId, req.body, schemaErrors(req));
      return ok('Saved Successfully', { id });
    },
  );

  app.get(
    '/unsubscribes-groups/details',
    {
      config: { scope: 'lists.read' },
      schema: { summary: 'View an unsubscribe group', querystring: GroupIdQuery, response: responses(UnsubscribeGroupDetails, 404, 422) },
    },
    async (req) => ok({ unsubscribesGroup: await getGroup(deps, req.userId, req.query.id) }),
  );

  // Unlike the other updates, the id travels in the query and only the fields in the body.
  app.post(
    '/unsubscribes-groups/update',
    {
      schema: { summary: 'Update an unsubscribe group', querystring: GroupIdQuery, body: GroupBody, response: responses(OkText, 404, 422) },
      config: { scope: 'lists.write', deferValidation: true },
    },
    async (req) => {
      await updateGroup(deps, req.userId, req.query.id, req.body, schemaErrors(req));
      return ok('Updated Successfully');
    },
  );

  app.delete(
    '/unsubscribes-groups/delete',
    {
      config: { scope: 'lists.write' },
      schema: { summary: 'Delete an unsubscribe group', querystring: GroupIdQuery, response: responses(OkText, 404, 422) },
    },
    async (req) => {
      await deleteGroup(deps, req.userId, req.query.id);
      return ok('Deleted Successfully');
    },
  );
};
