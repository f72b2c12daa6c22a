import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { trackingLinks } from '../delivery/tracking.js';
import { Media } from '../http/schemas.js';
import { createOpenBatches } from './open-batches.js';

/**
 * The smallest well-formed transparent 1×1 GIF (43 bytes): its image data is the LZW codes clear,
 * pixel 0 and end-of-information (two data bytes), then the `;` trailer. Strict decoders refuse
 * the common 42-byte variant, whose one data byte stops before the end-of-information code.
 */
export const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');

const schema = {
  summary: 'The open-tracking pixel of a mail',
  description:
    "Loaded by the recipient's mail client from the image in each mail. Always a 1×1 transparent GIF, never cached; " +
    'a genuine token counts an open of its message (and, the first time, a unique open); any other token counts nothing.',
  params: Type.Object({ token: Type.String({ maxLength: 2048, description: 'The signed open token from the mail.' }) }),
  response: {
    200: Media('image/gif', 'A transparent 1×1 GIF, whatever the token.', Type.String({ contentMediaType: 'image/gif' })),
  },
};

/**
 * `GET /t/open/<token>.gif`: public (mail clients load it without keys; the signed token is the
 * credential). The answer is the same image whatever happens, so a link tells its holder nothing,
 * and a counting failure (the database away) loses that open but never breaks the mail's look.
 * HEAD requests (link checkers) get the image and count nothing. No rate limit: opens arrive from
 * a few mail providers' image proxies, so a per-address limit would drop genuine opens, and a
 * forged token costs one HMAC and no database work.
 */
export const trackingRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const links = trackingLinks(app.deps.config);
  // The clock read at each batch, so a test that moves the app's clock moves the counted times too.
  const opens = createOpenBatches(app.deps.database.db, { now: () => app.deps.clock.now() });
  app.get('/t/open/:token.gif', { schema, config: { public: true, deferValidation: true } }, async (req, reply) => {
    const messageId = req.method === 'GET' ? links.readOpenToken(req.params.token) : null;
    if (messageId !== null) {
      try {
        await opens.count(messageId);
      } catch (err) {
        req.log.error({ err, messageId }, 'open not counted');
      }
    }
    return reply.header('Cache-Control', 'no-store').header('X-Content-Type-Options', 'nosniff').type('image/gif').send(PIXEL);
  });
};
