import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { schemaErrors } from '../../http/error-handler.js';
import { sendList } from '../../http/list.js';
import { DeleteCustomFieldQuery, ListFieldsQuery, SaveCustomFieldBody } from './fields.schema.js';
import { createCustomField, deleteCustomField, fieldList } from './fields.service.js';

/** `/reserve-fields` and `/custom-fields…` endpoints. */
export const fieldRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.deps.database;

  app.get('/reserve-fields', { schema: { querystring: ListFieldsQuery } }, (req, reply) =>
    sendList(reply, 'reservedFields', req.query, fieldList(db, null)),
  );

  app.get('/custom-fields', { schema: { querystring: ListFieldsQuery } }, (req, reply) =>
    sendList(reply, 'customFields', req.query, fieldList(db, req.userId)),
  );

  app.post('/custom-fields/save', { schema: { body: SaveCustomFieldBody }, config: { deferValidation: true } }, async (req) => {
    const id = await createCustomField(db, req.userId, req.body, schemaErrors(req));
    return ok('Added Successfully', { id });
  });

  app.delete('/custom-fields/delete', { schema: { querystring: DeleteCustomFieldQuery } }, async (req) => {
    await deleteCustomField(db, req.userId, req.query.id);
    return ok('Deleted Successfully');
  });
};
