import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { FastifyPluginAsync } from 'fastify';
import { AppError } from '../http/errors.js';
import { TEMPLATE_ASSETS_DIR } from '../modules/templates/templates.catalog.js';

/** A plain file name: no separators, no dots but the extension's, so no way out of the folder. */
const PNG_NAME = /^[a-z0-9][a-z0-9_-]*\.png$/;

interface Image {
  data: Buffer;
  etag: string;
}

/**
 * `GET /images/templates/<file>` (contract §11): the shipped templates' preview images, public
 * (mail clients and editors load them without keys). Only names from a listing of the folder taken
 * at start are served, so a crafted name can never reach another file.
 */
export const imageRoutes: FastifyPluginAsync = async (app) => {
  const served = new Set(readdirSync(TEMPLATE_ASSETS_DIR).filter((f) => PNG_NAME.test(f)));
  const cache = new Map<string, Image>();

  function image(name: string): Image | undefined {
    if (!PNG_NAME.test(name) || !served.has(name)) return undefined;
    let hit = cache.get(name);
    if (!hit) {
      const data = readFileSync(TEMPLATE_ASSETS_DIR + name);
      hit = { data, etag: `"${createHash('sha1').update(data).digest('base64url')}"` };
      cache.set(name, hit);
    }
    return hit;
  }

  app.get<{ Params: { file: string } }>('/images/templates/:file', { config: { public: true } }, async (req, reply) => {
    const found = image(req.params.file);
    // The same answer as an unknown path: a miss tells nothing about the server's files.
    if (!found) throw new AppError(404, 'Route not found');
    reply
      .header('ETag', found.etag)
      .header('Cache-Control', 'public, max-age=86400')
      .header('X-Content-Type-Options', 'nosniff');
    if (req.headers['if-none-match'] === found.etag) return reply.code(304).send();
    return reply.type('image/png').send(found.data);
  });
};
