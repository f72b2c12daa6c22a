import { readdirSync, readFileSync } from 'node:fs';
import etag from '@fastify/etag';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '../http/errors.js';
import { FailedText, Media, NotModified } from '../http/schemas.js';
import { TEMPLATE_ASSETS_DIR } from '../delivery/designs.js';

/** A plain file name: no separators, no dots but the extension's, so no way out of the folder. */
const PNG_NAME = /^[a-z0-9][a-z0-9_-]*\.png$/;

const schema = {
  summary: "A design template's preview image",
  params: Type.Object({ file: Type.String({ description: "The template's `preview_image`." }) }),
  response: {
    200: Media('image/png', 'The PNG image; cacheable (`ETag`, one day).', Type.String({ contentMediaType: 'image/png' })),
    304: NotModified,
    404: Type.Object(FailedText.properties, { description: 'No such image: `Route not found`, as for an unknown path.' }),
  },
};

/**
 * `GET /images/templates/<file>`: the shipped templates' preview images, public (mail clients and
 * editors load them without keys). Only names from a listing of the folder taken at start are
 * served, so a crafted name can never reach another file.
 */
export const imageRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(etag);
  const served = new Set(readdirSync(TEMPLATE_ASSETS_DIR).filter((f) => PNG_NAME.test(f)));
  const cache = new Map<string, Buffer>();

  function image(name: string): Buffer | undefined {
    if (!PNG_NAME.test(name) || !served.has(name)) return undefined;
    let data = cache.get(name);
    if (!data) {
      data = readFileSync(TEMPLATE_ASSETS_DIR + name);
      cache.set(name, data);
    }
    return data;
  }

  app.get('/images/templates/:file', { schema, config: { public: true } }, async (req, reply) => {
    const data = image(req.params.file);
    // The same answer as an unknown path: a miss tells nothing about the server's files.
    if (!data) throw new AppError(404, 'Route not found');
    return reply.header('Cache-Control', 'public, max-age=86400').header('X-Content-Type-Options', 'nosniff').type('image/png').send(data);
  });
};
