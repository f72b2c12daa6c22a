import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { schemaErrors } from '../../http/error-handler.js';
import { sendList } from '../../http/list.js';
import { OkText, responses } from '../../http/schemas.js';
import { CreateFormBody, FormCreated, FormDetails, FormIdQuery, FormList, ListFormsQuery, UpdateFormBody } from './forms.schema.js';
import { createForm, getForm, listForms, removeForm, updateForm } from './forms.service.js';

/** `/forms…` endpoints: the account's sign-up forms (the public side is public/subscribe.routes.ts). */
export const formRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  app.get(
    '/forms',
    {
      config: { scope: 'forms.read' },
      schema: { summary: 'List sign-up forms', querystring: ListFormsQuery, response: responses(FormList, 422) },
    },
    (req, reply) => sendList(reply, 'forms', req.query, listForms(deps, req.userId)),
  );

  app.post(
    '/forms/create',
    {
      schema: { summary: 'Create a sign-up form', body: CreateFormBody, response: responses(FormCreated, 422) },
      config: { scope: 'forms.write', deferValidation: true },
    },
    async (req) => {
      const { id, embed_html } = await createForm(deps, req.userId, req.body, schemaErrors(req));
      return ok('Added Successfully', { id, embed_html });
    },
  );

  app.get(
    '/forms/details',
    {
      config: { scope: 'forms.read' },
      schema: {
        summary: 'View a sign-up form and its HTML to embed',
        querystring: FormIdQuery,
        response: responses(FormDetails, 404, 422),
      },
    },
    async (req) => ok({ form: await getForm(deps, req.userId, req.query.id) }),
  );

  app.post(
    '/forms/update',
    {
      schema: { summary: 'Update a sign-up form', body: UpdateFormBody, response: responses(OkText, 404, 422) },
      config: { scope: 'forms.write', deferValidation: true },
    },
    async (req) => {
      await updateForm(deps, req.userId, req.body, schemaErrors(req));
      return ok('Updated Successfully');
    },
  );

  app.delete(
    '/forms/delete',
    {
      config: { scope: 'forms.write' },
      schema: { summary: 'Delete a sign-up form', querystring: FormIdQuery, response: responses(OkText, 404, 422) },
    },
    async (req) => {
      await removeForm(deps, req.userId, req.query.id);
      return ok('Deleted Successfully');
    },
  );
};
