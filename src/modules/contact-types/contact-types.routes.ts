import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok, okInErrors } from '../../http/envelope.js';
import { sendList } from '../../http/list.js';
import {
  AddContactTypeBody,
  DeleteContactTypeQuery,
  ListContactTypesQuery,
  UpdateContactTypeBody,
  ViewContactTypeQuery,
} from './contact-types.schema.js';
import { contactTypeList, createContactType, deleteContactType, renameContactType, viewContactType } from './contact-types.service.js';

/** `/contacts-type…` endpoints. */
export const contactTypeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.deps.database;

  app.get('/contacts-type', { schema: { querystring: ListContactTypesQuery } }, (req, reply) =>
    sendList(reply, 'contactTypes', req.query, contactTypeList(db, req.userId)),
  );

  app.post('/contacts-type/add', { schema: { body: AddContactTypeBody } }, async (req) => {
    const id = await createContactType(db, req.userId, req.body.name);
    return ok('Added Successfully', { id });
  });

  app.get('/contacts-type/view', { schema: { querystring: ViewContactTypeQuery } }, async (req) =>
    ok({ contactType: await viewContactType(db, req.userId, req.query.contact_type_id) }),
  );

  app.post('/contacts-type/update', { schema: { body: UpdateContactTypeBody } }, async (req) => {
    await renameContactType(db, req.userId, req.body.id, req.body.name);
    return ok('Updated Successfully');
  });

  app.delete('/contacts-type/delete', { schema: { querystring: DeleteContactTypeQuery } }, async (req) => {
    await deleteContactType(db, req.userId, req.query.contact_type_id);
    return okInErrors('Deleted Successfully');
  });
};
