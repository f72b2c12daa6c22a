import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { sendList } from '../../http/list.js';
import { OkText, responses } from '../../http/schemas.js';
import { MediaCache } from './media.cache.js';
import { Slots } from './media.slots.js';
import { mediaPublicRoutes } from './media.public.routes.js';
import { ListMediaQuery, MediaDetails, MediaIdQuery, MediaList, MediaUploaded, UploadMediaBody } from './media.schema.js';
import { getMedia, listMedia, removeMedia, uploadMedia } from './media.service.js';
import { receiveImage, refuseHugeBodies } from './media.upload.js';

const tags = ['Media'];

/** How long a cached image is served before the database is asked whether it still exists. */
const RECHECK_MS = 60_000;

/** Uploads read into memory at once in this process (each at most `MAX_MEDIA_MB`). */
const readers = new Slots(3);

/** `/media…` endpoints: the account's image library, and the images' public URLs (docs/media.md). */
export const mediaRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;
  const cache = new MediaCache(deps.config.mediaCacheBytes, RECHECK_MS);
  await app.register(mediaPublicRoutes, { cache });

  app.post(
    '/media/upload',
    {
      schema: {
        summary: 'Upload an image',
        description:
          'PNG, JPEG, GIF or WebP, recognised by its content. Its metadata (EXIF, GPS, comments) is removed and its EXIF ' +
          'orientation applied; animations keep their frames (at most 100). A body over twice `MAX_MEDIA_MB` is refused with 413 before it is read.',
        tags,
        response: responses(MediaUploaded, 422),
      },
      config: { scope: 'designs.write', rawMultipart: true, documentedBody: UploadMediaBody },
      preParsing: refuseHugeBodies(deps.config.maxMediaBytes),
    },
    async (req) => {
      // Read only when a slot is free: a burst of uploads waits unread rather than all in memory.
      const media = await readers.run(async () => uploadMedia(deps, req.userId, await receiveImage(req, deps.config.maxMediaBytes)));
      return ok({ media });
    },
  );

  app.get(
    '/media',
    {
      config: { scope: 'designs.read' },
      schema: { summary: 'List the media library', tags, querystring: ListMediaQuery, response: responses(MediaList, 422) },
    },
    (req, reply) => sendList(reply, 'media', req.query, listMedia(deps, req.userId)),
  );

  app.get(
    '/media/details',
    {
      config: { scope: 'designs.read' },
      schema: {
        summary: 'View an image and where it is used',
        tags,
        querystring: MediaIdQuery,
        response: responses(MediaDetails, 404, 422),
      },
    },
    async (req) => ok({ media: await getMedia(deps, req.userId, req.query.id) }),
  );

  app.delete(
    '/media/delete',
    {
      config: { scope: 'designs.write' },
      schema: {
        summary: 'Delete an image',
        description: 'Refused (409, naming them) while a design, single send or automation email uses it. Its URLs then answer 404.',
        tags,
        querystring: MediaIdQuery,
        response: responses(OkText, 404, 409, 422),
      },
    },
    async (req) => {
      const token = await removeMedia(deps, req.userId, req.query.id);
      cache.delete(token);
      cache.delete(`${token}/thumb`);
      return ok('Deleted Successfully');
    },
  );
};
