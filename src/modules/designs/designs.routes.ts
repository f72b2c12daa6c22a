import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { schemaErrors } from '../../http/error-handler.js';
import { sendList } from '../../http/list.js';
import { OkCreated, OkText, responses } from '../../http/schemas.js';
import {
  CreateDesignBody,
  DesignDetails,
  DesignIdQuery,
  DesignList,
  DuplicateDesignBody,
  ListDesignsQuery,
  UpdateDesignBody,
} from './designs.schema.js';
import { createDesign, duplicateDesign, getDesign, listDesigns, removeDesign, updateDesign } from './designs.service.js';

/** The tag of every route here (`/designs` itself does not fit the path prefixes: `/designs/<utr>` is a public page). */
const tags = ['Designs'];

/** `/designs…` endpoints: the account's saved designs (the public `/designs/<utr>` preview is public/design-preview.routes.ts). */
export const designRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  app.get(
    '/designs',
    {
      config: { scope: 'designs.read' },
      schema: { summary: 'List saved designs', tags, querystring: ListDesignsQuery, response: responses(DesignList, 422) },
    },
    (req, reply) => sendList(reply, 'designs', req.query, listDesigns(deps, req.userId)),
  );

  app.get(
    '/designs/details',
    {
      config: { scope: 'designs.read' },
      schema: { summary: 'View a saved design', tags, querystring: DesignIdQuery, response: responses(DesignDetails, 404, 422) },
    },
    async (req) => ok({ design: await getDesign(deps, req.userId, req.query.id) }),
  );

  app.post(
    '/designs/create',
    {
      schema: { summary: 'Save a design', tags, body: CreateDesignBody, response: responses(OkCreated, 422) },
      config: { scope: 'designs.write', deferValidation: true },
    },
    async (req) => {
      const id = await createDesign(deps, req.userId, req.body, schemaErrors(req));
      return ok('Added Successfully', { id });
    },
  );

  app.post(
    '/designs/update',
    {
      schema: { summary: 'Rename a design or replace its document', tags, body: UpdateDesignBody, response: responses(OkText, 404, 422) },
      config: { scope: 'designs.write', deferValidation: true },
    },
    async (req) => {
      await updateDesign(deps, req.userId, req.body, schemaErrors(req));
      return ok('Updated Successfully');
    },
  );

  app.post(
    '/designs/duplicate',
    {
      schema: { summary: 'Copy a design', tags, body: DuplicateDesignBody, response: responses(OkCreated, 404, 422) },
      config: { scope: 'designs.write', deferValidation: true },
    },
    async (req) => {
      const id = await duplicateDesign(deps, req.userId, req.body, schemaErrors(req));
      return ok('Duplicated Successfully', { id });
    },
  );

  app.delete(
    '/designs/delete',
    {
      config: { scope: 'designs.write' },
      schema: { summary: 'Delete a design', tags, querystring: DesignIdQuery, response: responses(OkText, 404, 422) },
    },
    async (req) => {
      await removeDesign(deps, req.userId, req.query.id);
      return ok('Deleted Successfully');
    },
  );
};
