import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../http/errors.js';
import { FailedText, NotModified } from '../../http/schemas.js';
import type { MediaCache, ServedImage } from './media.cache.js';
import { findServedMedia, mediaExists } from './media.queries.js';

/** A token as uploads make them: 96 random bits in hex. Anything else is not looked up. */
const TOKEN = /^[0-9a-f]{24}$/;

const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

const schemaFor = (summary: string) => ({
  summary,
  tags: ['Media'],
  params: Type.Object({
    token: Type.String({ description: "The image's token (from its `url`)." }),
    file: Type.String({ description: "The image's file name (any name serves the token's image)." }),
  }),
  response: {
    200: Type.Unsafe<Buffer>({
      description: 'The image, in the type found at upload; `Cache-Control: public, max-age=31536000, immutable` and an `ETag`.',
      content: Object.fromEntries(IMAGE_TYPES.map((t) => [t, { schema: { type: 'string', contentMediaType: t } }])),
    }),
    304: NotModified,
    404: Type.Object(FailedText.properties, { description: 'No such image (never uploaded, or deleted): `Route not found`.' }),
  },
});

/** Whether the request's `If-None-Match` names `etag` (a list, weak tags and `*` as RFC 9110 reads them). */
function notModified(req: FastifyRequest, etag: string): boolean {
  const header = req.headers['if-none-match'];
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

function answer(req: FastifyRequest, reply: FastifyReply, image: ServedImage): FastifyReply {
  reply
    .header('Cache-Control', 'public, max-age=31536000, immutable')
    .header('ETag', image.etag)
    .header('X-Content-Type-Options', 'nosniff')
    // Opened on its own, the image can run nothing, whatever bytes it holds.
    .header('Content-Security-Policy', "default-src 'none'; sandbox");
  if (notModified(req, image.etag)) return reply.code(304).send();
  return reply.type(image.type).send(image.bytes);
}

/**
 * `GET /media/<token>/<file>` and `/media/<token>/thumb/<file>`: the library's images, public
 * (mail clients load them without keys), from the in-process cache when there (docs/media.md).
 */
export const mediaPublicRoutes: FastifyPluginAsyncTypebox<{ cache: MediaCache }> = async (app, { cache }) => {
  const { db } = app.deps.database;
  const now = () => app.deps.clock.now().getTime();

  async function served(token: string, thumb: boolean): Promise<ServedImage | undefined> {
    if (!TOKEN.test(token)) return undefined;
    const key = thumb ? `${token}/thumb` : token;
    const hit = cache.get(key, now());
    if (hit && !hit.stale) return hit.image;
    if (hit) {
      // Another process may have deleted it: a cheap look at the row, not a read of its bytes.
      if (await mediaExists(db, token)) {
        cache.touch(key, now());
        return hit.image;
      }
      cache.delete(key);
      return undefined;
    }
    const row = await findServedMedia(db, token, thumb);
    if (!row) return undefined;
    const image = { bytes: row.bytes, type: thumb ? row.thumb_type : row.content_type, etag: `"${row.etag}${thumb ? '-t' : ''}"` };
    cache.set(key, image, now());
    return image;
  }

  for (const [path, thumb] of [
    ['/media/:token/:file', false],
    ['/media/:token/thumb/:file', true],
  ] as const) {
    app.get(
      path,
      { schema: schemaFor(thumb ? "An image's thumbnail" : 'An image of the media library'), config: { public: true } },
      async (req, reply) => {
        const image = await served(req.params.token, thumb);
        // The same answer as an unknown path: a miss tells nothing.
        if (!image) throw new AppError(404, 'Route not found');
        return answer(req, reply, image);
      },
    );
  }
};
