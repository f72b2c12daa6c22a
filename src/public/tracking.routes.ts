import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import type { Db } from '../db/index.js';
import { locationOf } from '../delivery/click-links.js';
import { TRAP_LINK_ID, trackingLinks } from '../delivery/tracking.js';
import { Media } from '../http/schemas.js';
import type { MailKinds } from '../messages/messages.kinds.js';
import { clickKey, clickTargets } from './messages.queries.js';
import { createClickBatches } from './click-batches.js';
import { loadAddressRanges, machineRules } from './machines.js';
import { createOpenBatches } from './open-batches.js';
import { messagePage, sendPage } from './page.js';

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
    'a genuine token counts an open of its message (and, the first time, a unique open); any other token counts nothing. ' +
    "An open whose User-Agent is missing, empty, exactly `Mozilla/5.0` (Apple Mail Privacy Protection's proxy) or a " +
    "prefetching agent's, or whose address is in `MACHINE_IP_RANGES_FILE`, is a machine open: it counts as before and in " +
    "`machine_opens`, never as a person's (docs/engagement.md). HEAD answers the same image and counts nothing.",
  params: Type.Object({ token: Type.String({ maxLength: 2048, description: 'The signed open token from the mail.' }) }),
  response: {
    200: Media('image/gif', 'A transparent 1×1 GIF, whatever the token.', Type.String({ contentMediaType: 'image/gif' })),
  },
};

const clickSchema = {
  summary: 'The click redirect of a tracked link in a mail',
  description:
    "Every `http:`/`https:` link of a mail's HTML part (but the unsubscribe/preferences link) points here when its send or " +
    "automation email tracks clicks. A genuine token answers `302` to the link's URL exactly as the mail had it (placeholders " +
    'filled for the recipient) and counts the click: `total_clicks`, and the first time per recipient `unique_clicks`, on the ' +
    "send (or automation) and on the link; a first click of a mail never opened also counts its open. A scanner's click " +
    "(User-Agent missing, empty or a scanner's; the mail's hidden trap link, and every click of the mail within 60 s of it; " +
    'two different links of one mail within 2 s) answers the same redirect but counts in `bot_clicks` only ' +
    '(docs/engagement.md). A forged or altered token answers 404 with a short page and never redirects. HEAD answers as GET ' +
    'and counts nothing.',
  params: Type.Object({ token: Type.String({ maxLength: 2048, description: 'The signed click token from the mail.' }) }),
  response: {
    302: Type.Null({ description: "To the link's URL (`Location`); no body." }),
    404: Media('text/html', 'The link is invalid (forged or altered) or its mail no longer exists; nothing counted, no redirect.'),
    503: Media('text/html', 'The click could not be recorded (the database is away); try again.'),
  },
};

/** Whether a message exists (a trap link of a deleted message is not found, as its other links). */
async function messageExists(db: Db, id: number): Promise<boolean> {
  return (await db.selectFrom('mail_messages').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

const linkNotFound = (reply: FastifyReply) =>
  sendPage(reply, 404, messagePage('Link not valid', 'This link is not valid. Use the link from the email you received.'));

/**
 * `GET /t/click/<token>`: public (the signed token is the credential). The target comes only from
 * the stored link the token names, so no token can make it redirect anywhere else. Counting goes
 * through the group commit of `click-batches.ts`; the redirect waits for it, so an answered click
 * is a counted click. `Referrer-Policy: no-referrer` keeps the token out of the target's logs.
 */
export const clickRoutes: FastifyPluginAsyncTypebox<{ kinds: MailKinds }> = async (app, { kinds }) => {
  const links = trackingLinks(app.deps.config);
  const { db } = app.deps.database;
  const unsubscribeUrl = (messageId: number) => links.unsubscribeUrl(messageId);
  const clicks = createClickBatches(db, kinds, { now: () => app.deps.clock.now() }, unsubscribeUrl, links.trapTarget);
  const rules = machineRules();
  app.get('/t/click/:token', { schema: clickSchema, config: { public: true, deferValidation: true } }, async (req, reply) => {
    const click = links.readClickToken(req.params.token);
    if (!click) return linkNotFound(reply);
    let url: string | null;
    try {
      if (req.method === 'GET') url = await clicks.count(click, rules.isScannerAgent(req.headers['user-agent']));
      else if (click.linkId === TRAP_LINK_ID) url = (await messageExists(db, click.messageId)) ? links.trapTarget : null;
      else url = (await clickTargets(db, kinds, [click], unsubscribeUrl)).get(clickKey(click)) ?? null;
    } catch (err) {
      req.log.error({ err, click }, 'click not counted');
      return sendPage(reply, 503, messagePage('Try again', 'This link could not be opened just now. Please try again in a moment.'));
    }
    if (url === null) return linkNotFound(reply);
    return reply
      .header('Cache-Control', 'no-store')
      .header('Referrer-Policy', 'no-referrer')
      .header('X-Content-Type-Options', 'nosniff')
      .redirect(locationOf(url), 302);
  });
};

/**
 * `GET /t/open/<token>.gif`: public (mail clients load it without keys; the signed token is the
 * credential). The answer is the same image whatever happens, so a link tells its holder nothing,
 * and a counting failure (the database away) loses that open but never breaks the mail's look.
 * HEAD requests (link checkers) get the image and count nothing. No rate limit: opens arrive from
 * a few mail providers' image proxies, so a per-address limit would drop genuine opens, and a
 * forged token costs one HMAC and no database work.
 */
export const trackingRoutes: FastifyPluginAsyncTypebox<{ kinds: MailKinds }> = async (app, { kinds }) => {
  const links = trackingLinks(app.deps.config);
  // The clock read at each batch, so a test that moves the app's clock moves the counted times too.
  const opens = createOpenBatches(app.deps.database.db, kinds, { now: () => app.deps.clock.now() });
  // The address ranges are read once, at start: a file that cannot be read stops the start.
  const rules = machineRules(loadAddressRanges(app.deps.config.machineIpRangesFile));
  app.get('/t/open/:token.gif', { schema, config: { public: true, deferValidation: true } }, async (req, reply) => {
    const messageId = req.method === 'GET' ? links.readOpenToken(req.params.token) : null;
    if (messageId !== null) {
      try {
        await opens.count(messageId, rules.isMachineOpen(req.headers['user-agent'], req.ip));
      } catch (err) {
        req.log.error({ err, messageId }, 'open not counted');
      }
    }
    return reply.header('Cache-Control', 'no-store').header('X-Content-Type-Options', 'nosniff').type('image/gif').send(PIXEL);
  });
};
