import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { schemaErrors } from '../../http/error-handler.js';
import { sendList } from '../../http/list.js';
import { ListOf, OkCreated, OkText, responses, StrIds, Success } from '../../http/schemas.js';
import {
  AddContactBody,
  ContactIdQuery,
  ContactListItem,
  ContactShape,
  ListContactsQuery,
  SearchContactsAnswer,
  SearchContactsQuery,
  UpdateContactBody,
} from './contacts.schema.js';
import {
  addContact,
  bulkDeleteContacts,
  deleteContact,
  getContact,
  listContacts,
  searchContacts,
  updateContact,
} from './contacts.service.js';

/** `/contacts/…` endpoints (CSV ones live in contacts.csv.routes.ts). */
export const contactRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  app.get(
    '/contacts/list',
    {
      schema: {
        summary: 'List contacts',
        description: 'Every live contact of the account, newest first; `country` is the country name here.',
        querystring: ListContactsQuery,
        response: responses(ListOf('contacts', ContactListItem), 422),
      },
    },
    (req, reply) => sendList(reply, 'contacts', req.query, listContacts(deps, req.userId)),
  );

  app.get(
    '/contacts/search',
    {
      schema: {
        summary: 'Search contacts by the start of their email',
        description:
          'One page (`page`, `per_page`: default 1 and 50) of the live contacts whose email address starts with `q`, compared ' +
          'without regard to case, in address order; without `q`, every contact, newest first. Instead of a `total`, `meta.has_more` ' +
          'says whether a next page exists, so a page costs the same on an account of any size. Items as in the list.',
        querystring: SearchContactsQuery,
        response: responses(SearchContactsAnswer, 422),
      },
    },
    async (req) => ok(await searchContacts(deps, req.userId, req.query)),
  );

  app.post(
    '/contacts/add',
    { schema: { summary: 'Add a contact', body: AddContactBody, response: responses(OkCreated, 422) }, config: { deferValidation: true } },
    async (req) => ok('Contact Added Successfully', { id: await addContact(deps, req.userId, req.body, schemaErrors(req)) }),
  );

  app.get(
    '/contacts/details',
    {
      schema: {
        summary: "A contact's details",
        description: '`country` is the country id (as text) here.',
        querystring: ContactIdQuery,
        response: responses(Success(Type.Object({ contact: ContactShape })), 404, 422),
      },
    },
    async (req) => ok({ contact: await getContact(deps, req.userId, req.query.contact_id) }),
  );

  app.post(
    '/contacts/update',
    {
      schema: {
        summary: 'Update a contact',
        description: 'Standard fields are replaced (omitted ones become empty); custom values not sent are kept.',
        body: UpdateContactBody,
        response: responses(OkText, 404, 422),
      },
      config: { deferValidation: true },
    },
    async (req) => {
      await updateContact(deps, req.userId, req.body, schemaErrors(req));
      return ok('Contact Updated Successfully');
    },
  );

  app.delete(
    '/contacts/delete',
    { schema: { summary: 'Delete a contact', querystring: ContactIdQuery, response: responses(OkText, 404, 422) } },
    async (req) => {
      await deleteContact(deps, req.userId, req.query.contact_id);
      return ok('Deleted Successfully');
    },
  );

  app.post(
    '/contacts/bulk-delete',
    {
      schema: {
        summary: 'Delete several contacts',
        description: 'Unknown and duplicate ids are ignored; 404 only when none was deleted.',
        body: StrIds,
        response: responses(OkText, 404, 422),
      },
    },
    async (req) => {
      await bulkDeleteContacts(deps, req.userId, req.body.strIds);
      return ok('Deleted Successfully');
    },
  );
};
