import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { schemaErrors } from '../../http/error-handler.js';
import { sendList } from '../../http/list.js';
import { StrIds, Success } from '../../http/schemas.js';
import { AddContactBody, ContactIdQuery, ContactShape, ListContactsQuery, UpdateContactBody } from './contacts.schema.js';
import { addContact, bulkDeleteContacts, contactList, deleteContact, getContact, updateContact } from './contacts.service.js';

/** `/contacts/…` endpoints (CSV ones live in contacts.csv.routes.ts). */
export const contactRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.deps.database;

  app.get('/contacts/list', { schema: { querystring: ListContactsQuery } }, (req, reply) =>
    sendList(reply, 'contacts', req.query, contactList(db, req.userId)),
  );

  app.post('/contacts/add', { schema: { body: AddContactBody }, config: { deferValidation: true } }, async (req) => {
    const id = await addContact(db, req.userId, req.body, schemaErrors(req));
    return ok('Contact Added Successfully', { id });
  });

  const details = { querystring: ContactIdQuery, response: { 200: Success(Type.Object({ contact: ContactShape })) } };
  app.get('/contacts/details', { schema: details }, async (req) =>
    ok({ contact: await getContact(app.deps.database, req.userId, req.query.contact_id) }),
  );

  app.post('/contacts/update', { schema: { body: UpdateContactBody }, config: { deferValidation: true } }, async (req) => {
    await updateContact(db, req.userId, req.body, schemaErrors(req));
    return ok('Contact Updated Successfully');
  });

  app.delete('/contacts/delete', { schema: { querystring: ContactIdQuery } }, async (req) => {
    await deleteContact(db, req.userId, req.query.contact_id);
    return ok('Deleted Successfully');
  });

  app.post('/contacts/bulk-delete', { schema: { body: StrIds } }, async (req) => {
    await bulkDeleteContacts(db, req.userId, req.body.strIds);
    return ok('Deleted Successfully');
  });
};
