import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { schemaErrors } from '../../http/error-handler.js';
import { sendList } from '../../http/list.js';
import { OkText, responses, StrIds } from '../../http/schemas.js';
import {
  GlobalUnsubscribeList,
  GroupRecipientList,
  ListGlobalQuery,
  ManuallyAddBody,
  OkAdded,
  RecipientsListQuery,
  SaveGlobalBody,
  UnsubscriberIdQuery,
} from './unsubscribes.schema.js';
import {
  addGlobalUnsubscribes,
  addGroupRecipients,
  bulkDeleteUnsubscribers,
  deleteUnsubscriber,
  listGlobalUnsubscribes,
  listGroupRecipients,
} from './unsubscribes.service.js';

/** The answer of an add: `id` of the first address's entry, as any create answers, and `ids` of all. */
const added = (ids: number[]) => ok('Added Successfully', { id: ids[0], ids });

/** `/global-unsubscribes…` and the recipient endpoints of `/unsubscribes-groups…`. */
export const unsubscribeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  app.get(
    '/global-unsubscribes',
    {
      config: { scope: 'lists.read' },
      schema: { summary: 'List global unsubscribes', querystring: ListGlobalQuery, response: responses(GlobalUnsubscribeList, 422) },
    },
    (req, reply) => sendList(reply, 'unSubscribers', req.query, listGlobalUnsubscribes(deps, req.userId)),
  );

  app.post(
    '/global-unsubscribes/save',
    {
      config: { scope: 'lists.write' },
      schema: { summary: 'Add global unsubscribes', body: SaveGlobalBody, response: responses(OkAdded, 422) },
    },
    async (req) => added(await addGlobalUnsubscribes(deps, req.userId, req.body.email_address)),
  );

  app.delete(
    '/global-unsubscribes/delete',
    {
      config: { scope: 'lists.write' },
      schema: { summary: 'Delete a global unsubscribe', querystring: UnsubscriberIdQuery, response: responses(OkText, 404, 422) },
    },
    async (req) => {
      await deleteUnsubscriber(deps, req.userId, req.query.id, 'global');
      return ok('Deleted Successfully');
    },
  );

  app.post(
    '/global-unsubscribes/bulk-delete',
    {
      config: { scope: 'lists.write' },
      schema: { summary: 'Delete several global unsubscribes', body: StrIds, response: responses(OkText, 404, 422) },
    },
    async (req) => {
      await bulkDeleteUnsubscribers(deps, req.userId, req.body.strIds, 'global');
      return ok('Deleted Successfully');
    },
  );

  app.post(
    '/unsubscribes-groups/manually-add',
    {
      schema: { summary: 'Add addresses to an unsubscribe group', body: ManuallyAddBody, response: responses(OkAdded, 422) },
      config: { scope: 'lists.write', deferValidation: true },
    },
    async (req) => added(await addGroupRecipients(deps, req.userId, req.body, schemaErrors(req))),
  );

  app.get(
    '/unsubscribes-groups/recipients-list',
    {
      config: { scope: 'lists.read' },
      schema: {
        summary: "List an unsubscribe group's recipients",
        querystring: RecipientsListQuery,
        response: responses(GroupRecipientList, 404, 422),
      },
    },
    async (req, reply) => sendList(reply, 'recipients', req.query, await listGroupRecipients(deps, req.userId, req.query.groupId)),
  );

  app.delete(
    '/unsubscribes-groups/recipients-delete',
    {
      config: { scope: 'lists.write' },
      schema: {
        summary: 'Delete a recipient of an unsubscribe group',
        querystring: UnsubscriberIdQuery,
        response: responses(OkText, 404, 422),
      },
    },
    async (req) => {
      await deleteUnsubscriber(deps, req.userId, req.query.id, 'groups');
      return ok('Deleted Successfully');
    },
  );

  app.post(
    '/unsubscribes-groups/recipients-bulk-delete',
    {
      config: { scope: 'lists.write' },
      schema: { summary: 'Delete several recipients of unsubscribe groups', body: StrIds, response: responses(OkText, 404, 422) },
    },
    async (req) => {
      await bulkDeleteUnsubscribers(deps, req.userId, req.body.strIds, 'groups');
      return ok('Deleted Successfully');
    },
  );
};
