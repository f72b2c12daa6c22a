import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { schemaErrors } from '../../http/error-handler.js';
import { sendList } from '../../http/list.js';
import { StrIds } from '../../http/schemas.js';
import { ListNotificationRecipientsQuery, NotificationRecipientIdQuery, SaveNotificationRecipientBody } from './notifications.schema.js';
import {
  addNotificationRecipient,
  bulkDeleteNotificationRecipients,
  deleteNotificationRecipient,
  notificationRecipientList,
} from './notifications.service.js';

/** `/notification-recipients` and `/notification-recipient/…` endpoints. */
export const notificationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.deps.database;

  app.get('/notification-recipients', { schema: { querystring: ListNotificationRecipientsQuery } }, (req, reply) =>
    sendList(reply, 'notifications', req.query, notificationRecipientList(db, req.userId)),
  );

  app.post('/notification-recipient/save', { schema: { body: SaveNotificationRecipientBody }, config: { deferValidation: true } }, async (req) => {
    const id = await addNotificationRecipient(db, req.userId, req.body, schemaErrors(req));
    return ok('Added Successfully', { id });
  });

  app.delete('/notification-recipient/delete', { schema: { querystring: NotificationRecipientIdQuery } }, async (req) => {
    await deleteNotificationRecipient(db, req.userId, req.query.id);
    return ok('Deleted Successfully');
  });

  app.post('/notification-recipient/bulk-delete', { schema: { body: StrIds } }, async (req) => {
    await bulkDeleteNotificationRecipients(db, req.userId, req.body.strIds);
    return ok('Deleted Successfully');
  });
};
