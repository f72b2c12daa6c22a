/**
 * The console: the web application for account holders (built from web/ by `npm run build` into
 * dist/console), served at /app. Files under /app/assets/ carry a content hash in their names, so
 * they are cached for a year; every other path under /app is a page of the console and gets
 * index.html (never cached without asking), whose script routes in the browser, the mailed
 * invitation and reset links (/app/invite/<token>, /app/reset/<token>) included. No session is
 * needed here: people sign in on the page, and the console calls the API with their session.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import fastifyStatic from '@fastify/static';
import { Media } from '../http/schemas.js';
import { messagePage, sendPage } from './page.js';

/**
 * Script only from this server's own files, API calls only to this server, never framed. Inline
 * styles are allowed: an email is inline-styled by nature, and its previews (sandboxed frames,
 * which inherit this policy) and the email editor need them, as they need the images an email
 * links to. Script stays strict, so markup that slipped through could still run nothing.
 */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: https:; " +
  "font-src 'self' data: https:; connect-src 'self'; " +
  "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const HEADERS = {
  'Content-Security-Policy': CONSOLE_CSP,
  'Referrer-Policy': 'same-origin',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
};

/** The routes of the console, serving the built files of `dir`. */
export function consoleRoutes(dir: string): FastifyPluginAsync {
  return async (app) => {
    // Registered here, inside this plugin, so the `sendFile` decorator stays the console's own.
    await app.register(fastifyStatic, { root: dir, serve: false });

    const page = (reply: FastifyReply) => {
      if (!existsSync(join(dir, 'index.html'))) {
        const text = 'The console has not been built. Run `npm run build` (it builds the service and the console), then restart.';
        return sendPage(reply, 503, messagePage('Console not built', text));
      }
      return reply.headers({ ...HEADERS, 'Cache-Control': 'no-cache' }).sendFile('index.html', { cacheControl: false });
    };

    const schema = {
      summary: 'The console: the web application for account holders',
      description:
        'People sign in with their email and password and work in the browser. Every page under `/app/` answers this page (the console ' +
        'routes in the browser); its scripts and styles are served from `/app/assets/`. Answers 503 with a page saying ' +
        'so when the console has not been built.',
      tags: ['Public pages'],
      response: {
        200: Media('text/html', 'The console page.'),
        503: Media('text/html', 'The console is not built: run `npm run build`.'),
      },
    };
    app.get('/app', { schema, config: { public: true } }, (_req, reply) => page(reply));
    // The pages below /app and the built files: not API operations, left out of the document as /docs' files are.
    app.get<{ Params: { '*': string } }>('/app/*', { schema: { hide: true }, config: { public: true } }, (req, reply) => {
      const path = req.params['*'];
      // A missing asset is a 404 (a stale page asking for an old file), never index.html in its place.
      if (path.startsWith('assets/')) {
        return reply.headers(HEADERS).sendFile(path, { maxAge: 31_536_000_000, immutable: true });
      }
      return page(reply);
    });
  };
}
