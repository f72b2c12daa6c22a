import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { NoQuery } from './templates.schema.js';
import { designTemplatesBody, dynamicContentBody, type PreparedBody } from './templates.service.js';

/** A prepared envelope, with an ETag so clients can skip the ~150 KB of templates when unchanged. */
function sendPrepared(req: FastifyRequest, reply: FastifyReply, { body, etag }: PreparedBody) {
  reply.header('ETag', etag).header('Cache-Control', 'private, max-age=3600');
  if (req.headers['if-none-match'] === etag) return reply.code(304).send();
  return reply.type('application/json; charset=utf-8').send(body);
}

/** `/get-design/template` and `/get-dynamic/content` (api-spec "Design templates and dynamic content"). */
export const templateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/get-design/template', { schema: { querystring: NoQuery } }, async (req, reply) =>
    sendPrepared(req, reply, await designTemplatesBody()),
  );

  app.get('/get-dynamic/content', { schema: { querystring: NoQuery } }, async (req, reply) =>
    sendPrepared(req, reply, dynamicContentBody()),
  );
};
