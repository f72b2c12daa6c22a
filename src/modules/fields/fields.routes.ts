import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { schemaErrors } from '../../http/error-handler.js';
import { sendList } from '../../http/list.js';
import { ListOf, OkCreated, OkText, responses } from '../../http/schemas.js';
import { DeleteCustomFieldQuery, FieldShape, ListFieldsQuery, SaveCustomFieldBody } from './fields.schema.js';
import { createCustomField, deleteCustomField, listFields } from './fields.service.js';

/** `/reserve-fields` and `/custom-fields…` endpoints. */
export const fieldRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  app.get(
    '/reserve-fields',
    {
      config: { scope: 'contacts.read' },
      schema: {
        summary: 'List the reserved fields',
        querystring: ListFieldsQuery,
        response: responses(ListOf('reservedFields', FieldShape), 422),
      },
    },
    (req, reply) => sendList(reply, 'reservedFields', req.query, listFields(deps, null)),
  );

  app.get(
    '/custom-fields',
    {
      config: { scope: 'contacts.read' },
      schema: {
        summary: 'List the custom fields',
        querystring: ListFieldsQuery,
        response: responses(ListOf('customFields', FieldShape), 422),
      },
    },
    (req, reply) => sendList(reply, 'customFields', req.query, listFields(deps, req.userId)),
  );

  app.post(
    '/custom-fields/save',
    {
      schema: { summary: 'Add a custom field', body: SaveCustomFieldBody, response: responses(OkCreated, 422) },
      config: { scope: 'contacts.write', deferValidation: true },
    },
    async (req) => ok('Added Successfully', { id: await createCustomField(deps, req.userId, req.body, schemaErrors(req)) }),
  );

  app.delete(
    '/custom-fields/delete',
    {
      config: { scope: 'contacts.write' },
      schema: {
        summary: 'Delete a custom field and its values',
        description: 'Its values are removed from every contact of the account.',
        querystring: DeleteCustomFieldQuery,
        response: responses(OkText, 404, 422),
      },
    },
    async (req) => {
      await deleteCustomField(deps, req.userId, req.query.id);
      return ok('Deleted Successfully');
    },
  );
};
