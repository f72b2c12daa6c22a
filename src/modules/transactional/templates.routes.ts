import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { v3Responses } from '../../http/sendgrid.js';
import {
  CreateTemplateBody,
  CreateVersionBody,
  ListTemplatesQuery,
  Template,
  TemplateIdParams,
  TemplateList,
  UpdateTemplateBody,
  UpdateVersionBody,
  Version,
  VersionIdParams,
} from './templates.schema.js';
import {
  activateVersion,
  createTemplate,
  createVersion,
  deleteTemplate,
  deleteVersion,
  getTemplate,
  getVersion,
  listTemplates,
  updateTemplate,
  updateVersion,
} from './templates.service.js';

const tags = ['Transactional templates'];
const read = { scope: 'mail.read' } as const;
const write = { scope: 'mail.write' } as const;
const found = { notFound: true };

/**
 * `/v3/templates…`: SendGrid's dynamic templates and their versions, in its shapes (ids `d-…`,
 * `{"result":[…]}`, 201 and 204 answers, its error lists).
 */
export const transactionalTemplateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  app.post(
    '/v3/templates',
    {
      config: write,
      schema: { summary: 'Create a dynamic template', tags, body: CreateTemplateBody, response: v3Responses(201, Template) },
    },
    async (req, reply) => reply.code(201).send(await createTemplate(deps, req.userId, req.body)),
  );

  app.get(
    '/v3/templates',
    {
      config: read,
      schema: {
        summary: 'List dynamic templates',
        description: 'Newest first, `page_size` at a time; `_metadata.next` links the next page while more follow.',
        tags,
        querystring: ListTemplatesQuery,
        response: v3Responses(200, TemplateList),
      },
    },
    async (req) => listTemplates(deps, req.userId, req.query),
  );

  app.get(
    '/v3/templates/:template_id',
    {
      config: read,
      schema: { summary: 'View a template with its versions', tags, params: TemplateIdParams, response: v3Responses(200, Template, found) },
    },
    async (req) => getTemplate(deps, req.userId, req.params.template_id),
  );

  app.patch(
    '/v3/templates/:template_id',
    {
      config: write,
      schema: {
        summary: 'Rename a template',
        tags,
        params: TemplateIdParams,
        body: UpdateTemplateBody,
        response: v3Responses(200, Template, found),
      },
    },
    async (req) => updateTemplate(deps, req.userId, req.params.template_id, req.body),
  );

  app.delete(
    '/v3/templates/:template_id',
    {
      config: write,
      schema: { summary: 'Delete a template and its versions', tags, params: TemplateIdParams, response: v3Responses(204, null, found) },
    },
    async (req, reply) => {
      await deleteTemplate(deps, req.userId, req.params.template_id);
      return reply.code(204).send();
    },
  );

  app.post(
    '/v3/templates/:template_id/versions',
    {
      config: write,
      schema: {
        summary: 'Add a version to a template',
        description:
          'The subject, HTML and text are Handlebars templates (`{{x}}`, `{{{x}}}`, `#if`, `#unless`, `#each`, `#with`, `lookup`), ' +
          'checked here: one that does not compile is a 400 naming the field. The first version, or one sent with `active: 1`, ' +
          'becomes the active one.',
        tags,
        params: TemplateIdParams,
        body: CreateVersionBody,
        response: v3Responses(201, Version, found),
      },
    },
    async (req, reply) => reply.code(201).send(await createVersion(deps, req.userId, req.params.template_id, req.body)),
  );

  app.get(
    '/v3/templates/:template_id/versions/:version_id',
    {
      config: read,
      schema: { summary: 'View a version', tags, params: VersionIdParams, response: v3Responses(200, Version, found) },
    },
    async (req) => getVersion(deps, req.userId, req.params.template_id, req.params.version_id),
  );

  app.patch(
    '/v3/templates/:template_id/versions/:version_id',
    {
      config: write,
      schema: {
        summary: 'Change a version',
        description: 'What is not sent stays; `active: 1` makes it the active version.',
        tags,
        params: VersionIdParams,
        body: UpdateVersionBody,
        response: v3Responses(200, Version, found),
      },
    },
    async (req) => updateVersion(deps, req.userId, req.params.template_id, req.params.version_id, req.body),
  );

  app.delete(
    '/v3/templates/:template_id/versions/:version_id',
    {
      config: write,
      schema: { summary: 'Delete a version', tags, params: VersionIdParams, response: v3Responses(204, null, found) },
    },
    async (req, reply) => {
      await deleteVersion(deps, req.userId, req.params.template_id, req.params.version_id);
      return reply.code(204).send();
    },
  );

  app.post(
    '/v3/templates/:template_id/versions/:version_id/activate',
    {
      config: write,
      schema: {
        summary: 'Make a version the active one',
        tags,
        params: VersionIdParams,
        response: v3Responses(200, Version, found),
      },
    },
    async (req) => activateVersion(deps, req.userId, req.params.template_id, req.params.version_id),
  );
};
