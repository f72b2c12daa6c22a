import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { schemaErrors } from '../../http/error-handler.js';
import { sendList } from '../../http/list.js';
import { OkCreated, OkText, responses, StrIds } from '../../http/schemas.js';
import {
  ListNotificationRecipientsQuery,
  NotificationRecipientIdQuery,
  NotificationRecipientList,
  SaveNotificationRecipientBody,
} from './notifications.schema.js';
import {
  addNotificationRecipient,
  bulkDeleteNotificationRecipients,
  deleteNotificationRecipient,
  listNotificationRecipients,
} from './notifications.service.js';

/** `/notification-recipients` and `/notification-recipient/…` endpoints. */
export const notificationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  app.get(
    '/notification-recipients',
    {
      config: { scope: 'settings.read' },
      schema: {
        summary: 'List notification recipients',
        querystring: ListNotificationRecipientsQuery,
        response: responses(NotificationRecipientList, 422),
      },
    },
    (req, reply) => sendList(reply, 'notifications', req.query, listNotificationRecipients(deps, req.userId)),
  );

  app.post(
    '/notification-recipient/save',
    {
      schema: { summary: 'Add a notification recipient', body: SaveNotificationRecipientBody, response: responses(OkCreated, 422) },
      config: { scope: 'settings.write', deferValidation: true },
    },
    async (req) => {
      const id = await addNotificationRecipient(deps, req.userId, req.body, schemaErrors(req));
      return ok('Added Successfully', { id });
    },
  );

  app.delete(
    '/notification-recipient/delete',
    {
      config: { scope: 'settings.write' },
      schema: {
        summary: 'Delete a notification recipient',
        querystring: NotificationRecipientIdQuery,
        response: responses(OkText, 404, 422),
      },
    },
    async (req) => {
      await deleteNotificationRecipient(deps, req.userId, req.query.id);
      return ok('Deleted Successfully');
    },
  );

  app.post(
    '/notification-recipient/bulk-delete',
    {
      config: { scope: 'settings.write' },
      schema: { summary: 'Delete several notification recipients', body: StrIds, response: responses(OkText, 404, 422) },
    },
    async (req) => {
      await bulkDeleteNotificationRecipients(deps, req.userId, req.body.strIds);
      return ok('Deleted Successfully');
    },
  );
};
