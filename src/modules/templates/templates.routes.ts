import etag from '@fastify/etag';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { NotModified, responses, Success } from '../../http/schemas.js';
import { DesignTemplateSchema, NoQuery } from './templates.schema.js';
import { listDesignTemplates, listPlaceholderNames } from './templates.service.js';

const Templates = Success(
  Type.Object({ templates: Type.Array(DesignTemplateSchema) }),
  'Every shipped template, by id; id 1 is the blank one.',
);
const Contents = Success(Type.Object({ contents: Type.Array(Type.String()) }), 'The placeholder names, written `((name))` in a design.');

/** `/get-design/template` and `/get-dynamic/content`: the shipped designs and the placeholder names. */
export const templateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Clients can skip the ~150 KB of templates when unchanged. Weak: the body may leave compressed.
  await app.register(etag, { weak: true });

  app.get(
    '/get-design/template',
    {
      config: { scope: 'designs.read' },
      schema: {
        summary: 'List the design templates',
        description:
          "Each with its MJML source (`json_code`, MJML's JSON form), the compiled HTML and a preview image name (`/images/templates/<preview_image>`).",
        querystring: NoQuery,
        response: { ...responses(Templates), 304: NotModified },
      },
    },
    async (_req, reply) => {
      reply.header('Cache-Control', 'private, max-age=3600');
      return ok({ templates: await listDesignTemplates() });
    },
  );

  app.get(
    '/get-dynamic/content',
    {
      config: { scope: 'designs.read' },
      schema: { summary: 'List the placeholder names', querystring: NoQuery, response: { ...responses(Contents), 304: NotModified } },
    },
    async (_req, reply) => {
      reply.header('Cache-Control', 'private, max-age=3600');
      return ok({ contents: listPlaceholderNames() });
    },
  );
};
