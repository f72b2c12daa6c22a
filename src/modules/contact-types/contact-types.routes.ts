import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok, okInErrors } from '../../http/envelope.js';
import { sendList } from '../../http/list.js';
import { ListOf, OkCreated, OkInErrors, OkText, responses, Success } from '../../http/schemas.js';
import {
  AddContactTypeBody,
  ContactTypeListItem,
  ContactTypeShape,
  DeleteContactTypeQuery,
  ListContactTypesQuery,
  UpdateContactTypeBody,
  ViewContactTypeQuery,
} from './contact-types.schema.js';
import { createContactType, deleteContactType, listContactTypes, renameContactType, viewContactType } from './contact-types.service.js';

/** `/contacts-type…` endpoints. */
export const contactTypeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  app.get(
    '/contacts-type',
    {
      config: { scope: 'contacts.read' },
      schema: {
        summary: 'List contact types',
        querystring: ListContactTypesQuery,
        response: responses(ListOf('contactTypes', ContactTypeListItem), 422),
      },
    },
    (req, reply) => sendList(reply, 'contactTypes', req.query, listContactTypes(deps, req.userId)),
  );

  app.post(
    '/contacts-type/add',
    {
      config: { scope: 'contacts.write' },
      schema: { summary: 'Add a contact type', body: AddContactTypeBody, response: responses(OkCreated, 422) },
    },
    async (req) => ok('Added Successfully', { id: await createContactType(deps, req.userId, req.body.name) }),
  );

  app.get(
    '/contacts-type/view',
    {
      config: { scope: 'contacts.read' },
      schema: {
        summary: 'View a contact type',
        description: 'A missing or unknown id is a field error on `contact_type_id` (422), not a 404.',
        querystring: ViewContactTypeQuery,
        response: responses(Success(Type.Object({ contactType: ContactTypeShape })), 422),
      },
    },
    async (req) => ok({ contactType: await viewContactType(deps, req.userId, req.query.contact_type_id) }),
  );

  app.post(
    '/contacts-type/update',
    {
      config: { scope: 'contacts.write' },
      schema: { summary: 'Rename a contact type', body: UpdateContactTypeBody, response: responses(OkText, 404, 422) },
    },
    async (req) => {
      await renameContactType(deps, req.userId, req.body.id, req.body.name);
      return ok('Updated Successfully');
    },
  );

  app.delete(
    '/contacts-type/delete',
    {
      config: { scope: 'contacts.write' },
      schema: {
        summary: 'Delete a contact type and its contacts',
        querystring: DeleteContactTypeQuery,
        response: responses(OkInErrors, 404, 422),
      },
    },
    async (req) => {
      await deleteContactType(deps, req.userId, req.query.contact_type_id);
      return okInErrors('Deleted Successfully');
    },
  );
};
