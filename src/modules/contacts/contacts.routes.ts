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
import { eraseAddress, exportAddress } from './contacts.privacy.js';
import { AddressQuery, ContactExport } from './contacts.privacy.schema.js';

/** `/contacts/…` endpoints (CSV ones live in contacts.csv.routes.ts). */
export const contactRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  app.get(
    '/contacts/list',
    {
      config: { scope: 'contacts.read' },
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
      config: { scope: 'contacts.read' },
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
    {
      schema: { summary: 'Add a contact', body: AddContactBody, response: responses(OkCreated, 422) },
      config: { scope: 'contacts.write', deferValidation: true },
    },
    async (req) => ok('Contact Added Successfully', { id: await addContact(deps, req.userId, req.body, schemaErrors(req)) }),
  );

  app.get(
    '/contacts/details',
    {
      config: { scope: 'contacts.read' },
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
      config: { scope: 'contacts.write', deferValidation: true },
    },
    async (req) => {
      await updateContact(deps, req.userId, req.body, schemaErrors(req));
      return ok('Contact Updated Successfully');
    },
  );

  app.delete(
    '/contacts/delete',
    {
      config: { scope: 'contacts.write' },
      schema: { summary: 'Delete a contact', querystring: ContactIdQuery, response: responses(OkText, 404, 422) },
    },
    async (req) => {
      await deleteContact(deps, req.userId, req.query.contact_id);
      return ok('Deleted Successfully');
    },
  );

  app.post(
    '/contacts/bulk-delete',
    {
      config: { scope: 'contacts.write' },
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

  app.get(
    '/contacts/export',
    {
      config: { scope: 'contacts.read' },
      schema: {
        summary: "Export an address's data",
        description:
          'Everything the account holds about the address (any letter case): its contact records, segments, unsubscribes, ' +
          'suppression and campaign mail. An address the account does not hold: `Record not found`. See docs/privacy.md.',
        querystring: AddressQuery,
        response: responses(ContactExport, 404, 422),
      },
    },
    async (req) => ok(await exportAddress(deps, req.userId, req.query.email)),
  );

  app.delete(
    '/contacts/erase',
    {
      config: { scope: 'contacts.write' },
      schema: {
        summary: 'Erase an address',
        description:
          'Deletes every contact record with the address and every other copy of it in the account (queue rows keep their ' +
          'counts under a marker); statistics stay, and the account never mails the address again (a keyed hash is kept). ' +
          'An address the account does not hold: `Record not found`. See docs/privacy.md.',
        querystring: AddressQuery,
        response: responses(OkText, 404, 422),
      },
    },
    async (req) => {
      await eraseAddress(deps, req.userId, req.query.email);
      return ok('Erased Successfully');
    },
  );
};
